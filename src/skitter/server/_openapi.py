"""``skitter server``'s HTTP API as an OpenAPI 3.1 document, served at ``/openapi.json``.

The Scrapyd-compatible part (``*.json``, the log and items files) is what scrapyd-client,
ScrapydWeb and cron scripts call, so it is described field by field; the HTML pages are
listed with their parameters and answers, for completeness. As with the dashboard's
document, the test suite keeps it true: every route is in it and every path in it is
routed, and schemathesis checks a live service's answers against it. Parameters of the
``*.json`` calls are documented where scripts send them (the query string of a GET, the
form body of a POST); the service, as Scrapyd, reads both alike.
"""

from __future__ import annotations

from typing import Any

from skitter._version import __version__

__all__ = ["openapi_document"]

_REF = "#/components/schemas/"
_JSON = "application/json"
_FORM = "application/x-www-form-urlencoded"
_STR = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}
_INT = {"type": "integer", "minimum": 0}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF + name}


def _obj(properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    required = [key for key in properties if key not in optional]
    return {"type": "object", "properties": properties, "required": required}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _ok(properties: dict[str, Any], node: bool = True) -> dict[str, Any]:
    """Scrapyd's answer: ``status`` "ok", the node's name (not in the schedules' calls,
    which are skitter's own), and ``properties``."""
    named = {"node_name": _STR} if node else {}
    return _obj({"status": {"const": "ok"}, **named, **properties})


def _schemas() -> dict[str, Any]:
    job = {"id": _STR, "project": _STR, "spider": _STR}
    files = {"log_url": _STR, "items_url": _STR_OR_NULL}
    return {
        "Error": _obj({"status": {"const": "error"}, "node_name": _STR, "message": _STR}),
        "PendingJob": _obj(
            {**job, "version": _STR_OR_NULL, "settings": {"type": "object"},
             "args": {"type": "object"}}
        ),
        "RunningJob": _obj(
            {**job, "pid": {"type": ["integer", "null"]}, "start_time": _STR_OR_NULL, **files}
        ),
        "FinishedJob": _obj(
            {**job, "start_time": _STR_OR_NULL, "end_time": _STR_OR_NULL, **files}
        ),
        "Schedule": _obj(
            {"name": _STR, "project": _STR, "spider": _STR, "cron": _STR_OR_NULL,
             "every": _NUM_OR_NULL, "args": {"type": "object"}, "settings": {"type": "object"},
             "overlap": {"type": "boolean"}, "missed": _STR, "enabled": {"type": "boolean"},
             "next_at": _NUM_OR_NULL, "last_at": _NUM_OR_NULL, "last_job": _STR_OR_NULL,
             "last_error": _STR_OR_NULL, "fired": _INT, "skipped": _INT}
        ),
        "ScheduleForm": {
            "type": "object",
            "properties": {
                "name": _STR, "project": _STR, "spider": _STR,
                "cron": {**_STR, "description": "Five cron fields, UTC."},
                "every": {**_STR, "description": "Seconds, instead of cron."},
                "args": {**_STR, "description": "name=value, one a line."},
                "settings": {**_STR, "description": "NAME=value, one a line."},
                "missed": {"enum": ["skip", "once"]},
                "overlap": _STR,
            },
        },
    }  # fmt: skip


def _text(description: str, media: str = "text/plain") -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": _STR}}}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": schema}}}


#: What any request may meet before its handler: the access rules' answers.
_GUARDED = {
    "401": _text("Basic authentication is required (--username and --password)."),
    "403": _text("The Host is not loopback (no credentials), or a cross-origin POST."),
}
_REFUSED = _json("A missing or invalid parameter; the message says which.", _ref("Error"))


def _param(name: str, where: str = "query", required: bool = False, **schema: Any) -> Any:
    return {"name": name, "in": where, "required": required or where == "path",
            "schema": schema or (_NAME if required or where == "path" else _STR)}  # fmt: skip


def _scrapyd_get(summary: str, answer: dict[str, Any], *params: dict[str, Any]) -> Any:
    responses = {"200": _json("OK", _ok(answer)), "400": _REFUSED, **_GUARDED}
    return {"get": {"summary": summary, "parameters": list(params), "responses": responses}}


def _scrapyd_post(
    summary: str, answer: dict[str, Any], fields: dict[str, Any], media: str = _FORM
) -> Any:
    required = [name for name, schema in fields.items() if schema.pop("required", False)]
    body = {"type": "object", "properties": fields, "required": required}
    return {
        "post": {
            "summary": summary,
            "requestBody": {"required": True, "content": {media: {"schema": body}}},
            "responses": {"200": _json("OK", _ok(answer)), "400": _REFUSED, **_GUARDED},
        }
    }


def _page(summary: str, *params: dict[str, Any], **more: Any) -> Any:
    responses = {"200": _text("The page.", "text/html"), **_GUARDED, **more}
    return {"get": {"summary": summary, "parameters": list(params), "responses": responses}}


def _scrapyd_paths() -> dict[str, Any]:
    project = {**_NAME, "required": True}
    file_ = _text("The file, as it is now.", "text/plain")
    return {
        "/daemonstatus.json": _scrapyd_get(
            "Runs pending, running and finished.",
            {"pending": _INT, "running": _INT, "finished": _INT},
        ),
        "/listprojects.json": _scrapyd_get("Deployed projects.", {"projects": _array(_STR)}),
        "/listversions.json": _scrapyd_get(
            "A project's versions, oldest first.", {"versions": _array(_STR)},
            _param("project", required=True),
        ),
        "/listspiders.json": _scrapyd_get(
            "A version's spiders (the latest version by default).", {"spiders": _array(_STR)},
            _param("project", required=True), _param("_version"),
        ),
        "/listjobs.json": _scrapyd_get(
            "Runs by state, of one project or all.",
            {"pending": _array(_ref("PendingJob")), "running": _array(_ref("RunningJob")),
             "finished": _array(_ref("FinishedJob"))},
            _param("project"),
        ),
        "/addversion.json": _scrapyd_post(
            "Deploy a version: an egg or wheel upload, or a directory on this machine.",
            {"project": _STR, "version": _STR, "spiders": _INT},
            {"project": dict(project), "version": {**_NAME, "required": True},
             "egg": {**_STR, "contentMediaType": "application/octet-stream"},
             "directory": _STR},
            "multipart/form-data",
        ),
        "/schedule.json": _scrapyd_post(
            "Queue a run; any other field is a spider argument.",
            {"jobid": _STR},
            {"project": dict(project), "spider": {**_NAME, "required": True},
             "setting": {**_array(_STR), "description": "NAME=VALUE, repeatable."},
             "jobid": _STR, "_version": _STR, "priority": _STR},
        ),
        "/cancel.json": _scrapyd_post(
            "Stop a pending or running run.",
            {"prevstate": _STR_OR_NULL},
            {"project": dict(project), "job": {**_NAME, "required": True},
             "signal": {"enum": ["TERM", "INT", "KILL"]}},
        ),
        "/delversion.json": _scrapyd_post(
            "Delete a version.", {},
            {"project": dict(project), "version": {**_NAME, "required": True}},
        ),
        "/delproject.json": _scrapyd_post("Delete a project.", {}, {"project": dict(project)}),
        "/logs/{project}/{spider}/{file}": {"get": {
            "summary": "A run's log (JOB.log).",
            "parameters": [_param("project", "path"), _param("spider", "path"),
                           _param("file", "path")],
            "responses": {"200": file_, "404": _text("No such run or file."), **_GUARDED}}},
        "/items/{project}/{spider}/{file}": {"get": {
            "summary": "A run's items, JSON lines (JOB.jl).",
            "parameters": [_param("project", "path"), _param("spider", "path"),
                           _param("file", "path")],
            "responses": {"200": file_, "404": _text("No such run or file."), **_GUARDED}}},
    }  # fmt: skip


def _page_paths() -> dict[str, Any]:
    job = _param("job", "path")
    page = _param("page", type="integer", minimum=1)
    no_run = _text("No such run.")
    bad = _text("A query parameter out of range.")
    moved = {"description": "Done: to the page that shows it."}
    items = (_param("field"), _param("value"))
    schedules_ok = _ok({"schedules": _array(_ref("Schedule"))}, node=False)
    return {
        "/": _page("The run history, newest first.", page, *(
            _param(name) for name in ("project", "spider", "outcome", "state")), **{"400": bad}),
        "/static/server.css": {"get": {
            "summary": "The stylesheet (public).", "security": [], "responses": {
            "200": _text("CSS", "text/css"), "403": _GUARDED["403"]}}},
        "/static/favicon.svg": {"get": {
            "summary": "The icon (public).", "security": [], "responses": {
            "200": _text("SVG", "image/svg+xml"), "403": _GUARDED["403"]}}},
        "/runs/{job}": _page("One run: what was asked, how it ended, stats, files, log.",
                             job, **{"404": no_run}),
        "/runs/{job}/cancel": {"post": {"summary": "Stop the run (the page's button).",
                                        "parameters": [job], "responses": {
                                            "303": moved, "404": no_run, **_GUARDED}}},
        "/runs/{job}/results": _page("The run's items, a page at a time.", job, page, *items,
                                     **{"400": bad, "404": no_run}),
        "/runs/{job}/items.jsonl": {"get": {
            "summary": "The (filtered) items as JSON lines, to download.",
            "parameters": [job, *items],
            "responses": {"200": _text("The items.", "application/x-ndjson"), "404": no_run,
                          **_GUARDED}}},
        "/runs/{job}/items.csv": {"get": {
            "summary": "The (filtered) items as CSV, to download.",
            "parameters": [job, *items],
            "responses": {"200": _text("The items.", "text/csv"), "404": no_run, **_GUARDED}}},
        "/runs/{job}/tasks": _page(
            "An ended run's tasks (every URL), by state.", job, _param("state"),
            **{"400": _text("No such state."), "404": _text("No such run, or no job database."),
               "409": _text("The run has not ended, or its job cannot be read.")}),
        "/runs/{job}/task": _page(
            "One URL's task in an ended run, and its items.", job, _param("url", required=True),
            **{"400": _text("No url."), "404": _text("No such run, or no job database."),
               "409": _text("The run has not ended, or its job cannot be read.")}),
        "/schedules": {
            **_page("The schedules, and a form to add one."),
            "post": {"summary": "Add or replace a schedule (the form).",
                     "requestBody": {"content": {_FORM: {"schema": _ref("ScheduleForm")}}},
                     "responses": {"303": moved, "400": _text("The form again, with why.",
                                                              "text/html"), **_GUARDED}},
        },
        "/schedules/{name}/delete": {"post": {
            "summary": "Delete a schedule (the page's button).",
            "parameters": [_param("name", "path")],
            "responses": {"303": moved, "404": _text("No such schedule."), **_GUARDED}}},
        "/schedules.json": {"get": {"summary": "The schedules.", "responses": {
            "200": _json("OK", schedules_ok), **_GUARDED}}},
        "/addschedule.json": {"post": {
            "summary": "Add or replace a schedule (the form's fields).",
            "requestBody": {"content": {_FORM: {"schema": _ref("ScheduleForm")}}},
            "responses": {"200": _json("OK", _ok({"name": _STR, "next_at": _NUM_OR_NULL},
                                                 node=False)),
                          "400": _json("Why the schedule is refused.", {"type": "object"}),
                          **_GUARDED}}},
        "/delschedule.json": {"post": {
            "summary": "Delete a schedule.",
            "requestBody": {"content": {_FORM: {"schema": {
                "type": "object", "properties": {"name": _STR}}}}},
            "responses": {"200": _json("OK", {"type": "object",
                                              "properties": {"status": {"const": "ok"}},
                                              "required": ["status"]}),
                          "400": _json("No such schedule.", {"type": "object"}),
                          **_GUARDED}}},
        "/openapi.json": {"get": {"summary": "This document.", "responses": {
            "200": _json("OK", {"type": "object"}), **_GUARDED}}},
    }  # fmt: skip


def openapi_document() -> dict[str, Any]:
    """The whole document, a fresh dict each call."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "skitter server",
            "version": __version__,
            "description": (
                "Scrapyd's HTTP API (what scrapyd-client and ScrapydWeb call), and the "
                "service's own pages. On loopback without credentials, anyone on the "
                "machine may call it; with --username and --password, every request but "
                "the stylesheet needs HTTP basic authentication."
            ),
        },
        "paths": {**_scrapyd_paths(), **_page_paths()},
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"basic": {"type": "http", "scheme": "basic"}},
        },
        "security": [{"basic": []}, {}],
    }
