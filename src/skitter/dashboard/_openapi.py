"""The dashboard's HTTP API as an OpenAPI 3.1 document, served at ``/api/openapi.json``.

It is written here, beside the routes, rather than inferred from the handlers: the
handlers build plain dicts, so nothing in their signatures says what they return. What
keeps the two together is the test suite: every route the application registers must be
in ``paths`` and every path here must be routed, and schemathesis calls a live dashboard
with what this document allows and checks every response against it (status code,
content type, body schema). The documentation's HTTP API page is rendered from
``openapi_document()`` when the site is built.

Schemas say what a client may rely on: the keys always present are ``required``, and
objects stay open (``additionalProperties`` allowed) so that a key added later is not a
breaking change for a validating client.
"""

from __future__ import annotations

from typing import Any

from skitter._version import __version__

__all__ = ["openapi_document"]

_REF = "#/components/schemas/"
_JSON = "application/json"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF + name}


def _obj(properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object whose ``properties`` are all required except ``optional``."""
    required = [key for key in properties if key not in optional]
    return {"type": "object", "properties": properties, "required": required}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_INT = {"type": "integer", "minimum": 0}
_NUM = {"type": "number"}
_STR = {"type": "string"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}


def _schemas() -> dict[str, Any]:
    counts = _obj({"success": _INT, "failure": _INT})
    return {
        "Error": _obj({"error": {**_STR, "description": "What went wrong, to show as it is."}}),
        "Session": _obj({"csrf": {**_STR, "description": "For the X-Skitter-CSRF header."}}),
        "Summary": _obj(
            {
                "name": _STR,
                "status": {
                    **_STR,
                    "description": "new, running, paused, done, failed, monitors_failed, ...",
                },
                "rate": {**_NUM_OR_NULL, "description": "Tasks per second; null = unlimited."},
                "burst": _NUM_OR_NULL,
                "max_rate": _NUM_OR_NULL,
                "max_burst": _NUM_OR_NULL,
                "queue": _obj({"ready": _INT, "delayed": _INT, "processing": _INT}),
                "tasks": _obj(
                    {
                        "waiting": _INT,
                        "delayed": _INT,
                        "leased": _INT,
                        "in_flight": _INT,
                        "done": _INT,
                    }
                ),
                "counts": _obj({"5m": counts, "1h": counts, "all": counts}),
                "pages_per_second": {
                    **_array(_NUM),
                    "description": "10-second buckets over the last minutes, oldest first.",
                },
                "speed": _NUM,
                "active": _INT,
                "items": _INT,
                "unchanged": _INT,
                "started": {"type": ["string", "number", "null"]},
                "finish_reason": _STR_OR_NULL,
                "finish_error": _STR_OR_NULL,
                "job": {**_STR, "description": "A distributed crawl's job only."},
                "workers": {**_INT, "description": "A job's live workers."},
                "control_errors": _array(_STR),
            },
            optional=("job", "workers", "control_errors"),
        ),
        "ActiveTask": _obj(
            {
                "taskid": _STR,
                "url": _STR,
                "slot": _STR,
                "attempt": _INT,
                "started": _NUM,
                "elapsed": _NUM,
            }
        ),
        "Outcome": _obj(
            {
                "taskid": _STR,
                "url": _STR,
                "ok": {"type": "boolean"},
                "status": {"type": ["integer", "null"]},
                "reason": _STR,
                "items": _INT,
                "at": _NUM,
            }
        ),
        "FailedTask": _obj(
            {
                "taskid": _STR,
                "url": _STR,
                "domain": _STR,
                "state": _STR,
                "retried": _INT,
                "lastcrawltime": _NUM,
                "reason": _STR,
            }
        ),
        "Slot": _obj(
            {
                "slot": _STR,
                "in_flight": _INT,
                "queued": _INT,
                "done": _INT,
                "failed": _INT,
                "concurrency": _INT,
                "delay": _NUM,
                "breaker": _STR_OR_NULL,
                "backoff": _NUM,
            }
        ),
        "Proxy": {"type": "object", "description": "A proxy of PROXY_LIST, by its label."},
        "MonitorResult": _obj({"name": _STR, "status": _STR, "level": _STR, "message": _STR}),
        "Detail": _obj(
            {
                "name": _STR,
                "in_flight": _INT,
                "active": _array(_ref("ActiveTask")),
                "recent": _array(_ref("Outcome")),
                "failures": _array(_ref("Outcome")),
                "failed_tasks": _array(_ref("FailedTask")),
                "slots": _array(_ref("Slot")),
                "proxies": _array(_ref("Proxy")),
                "monitors": _array(_ref("MonitorResult")),
                "report": {
                    "oneOf": [
                        {"type": "null"},
                        _obj({"status": _STR, "final": {"type": "boolean"}}),
                    ]
                },
            }
        ),
        "Overview": _obj(
            {
                "now": {**_NUM, "description": "The server's time, epoch seconds."},
                "projects": _array(_ref("Summary")),
                "detail": {"oneOf": [{"type": "null"}, _ref("Detail")]},
            }
        ),
        "Report": {
            **_obj(
                {
                    "status": _STR,
                    "final": {"type": "boolean"},
                    "monitors": _array(_ref("MonitorResult")),
                }
            ),
            "description": "The run report of the project's monitors.",
        },
        "RateChange": {
            "type": "object",
            "properties": {
                "rate": {**_NUM_OR_NULL, "minimum": 0, "description": "null = unlimited."},
                "burst": {
                    **_NUM_OR_NULL,
                    "minimum": 0,
                    "description": "null = the default (10 x rate).",
                },
            },
        },
        "TaskFilter": {
            "type": "object",
            "properties": {
                "domain": {**_STR_OR_NULL, "description": "Only this host's tasks."},
                "reason": {**_STR_OR_NULL, "description": "Only tasks failed for this."},
            },
        },
        "Retried": _obj({"retried": _INT}),
        "Requeued": _obj({"requeued": _INT}),
    }


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": _ref("Error")}}}


def _ok(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {_JSON: {"schema": schema}}}


def _page(description: str, media: str = "text/html") -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": _STR}}}


_NAME = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "The project: a spider's name.",
    "schema": _STR,
}
#: What any request may meet before its handler: the guard's answers.
_GUARDED = {
    "401": _error("A token is required (the dashboard was started with one)."),
    "403": _error("The Host is not loopback (no token), or the request is cross-origin."),
}
_NO_PROJECT = {"404": _error("No project of that name.")}


def _get(summary: str, ok: dict[str, Any], *more: dict[str, Any], name: bool = True) -> Any:
    operation: dict[str, Any] = {"summary": summary, "responses": {"200": ok, **_GUARDED}}
    for extra in more:
        operation["responses"].update(extra)
    if name:
        operation["parameters"] = [_NAME]
        operation["responses"].update(_NO_PROJECT)
    return {"get": operation}


def _post(summary: str, ok: dict[str, Any], body: str | None) -> dict[str, Any]:
    responses = {
        "200": ok,
        "400": _error(
            "A body that is not a JSON object of the fields below, or a value "
            "the crawl refuses (the message is the crawl's own)."
        ),
        **_GUARDED,
        "403": _error(
            "Cross-origin, or no valid X-Skitter-CSRF header (needed unless the "
            "request carries the bearer token)."
        ),
        **_NO_PROJECT,
        "409": _error(
            "The project is not running (not started, or finished), or a "
            "cluster job's state is gone from Redis."
        ),
        "503": _error("A cluster job's Redis cannot be reached."),
    }
    operation: dict[str, Any] = {
        "summary": summary,
        "parameters": [_NAME],
        "security": [{"bearer": []}, {"session": [], "csrf": []}, {"csrf": []}],
        "responses": responses,
    }
    if body is not None:
        operation["requestBody"] = {
            "required": False,
            "content": {_JSON: {"schema": _ref(body)}},
        }
    return {"post": operation}


def _paths() -> dict[str, Any]:
    summary = _ok(_ref("Summary"), "The project's summary after the change.")
    detail_parts = {
        "active": ("Tasks downloading or being processed now.", "ActiveTask"),
        "recent": ("The latest outcomes, newest first.", "Outcome"),
        "failures": ("The latest failures, newest first.", "Outcome"),
        "failed": ("Failed tasks, to retry.", "FailedTask"),
        "slots": ("Download slots.", "Slot"),
        "proxies": ("The proxy pool (PROXY_LIST).", "Proxy"),
    }
    paths: dict[str, Any] = {
        "/": {
            "get": {
                "summary": "The dashboard page.",
                "responses": {
                    "200": _page("The page."),
                    "303": {"description": "To /login, when a token is needed and not given."},
                    **_GUARDED,
                },
            }
        },
        "/login": {
            "get": {
                "summary": "The login form.",
                "security": [],
                "responses": {
                    "200": _page("The form."),
                    "303": {"description": "To /: the dashboard has no token."},
                    "400": _page("The token was put in the URL: refused, whatever it is."),
                },
            },
            "post": {
                "summary": "Log in: a session cookie for the token.",
                "security": [],
                "requestBody": {
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {"type": "object", "properties": {"token": _STR}}
                        }
                    }
                },
                "responses": {
                    "303": {"description": "Logged in (Set-Cookie), or no token needed."},
                    "401": _page("Wrong token."),
                    "403": _error("A cross-origin form."),
                },
            },
        },
        "/static/{name}": {
            "get": {
                "summary": "The page's stylesheet, script and icon (public).",
                "security": [],
                "parameters": [{**_NAME, "description": "A file name."}],
                "responses": {
                    "200": {"description": "The file."},
                    "403": _GUARDED["403"],
                    "404": {"description": "No such file."},
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Every project's numbers for Prometheus.",
                "responses": {"200": _page("Prometheus' text format.", "text/plain"), **_GUARDED},
            }
        },
        "/api/openapi.json": _get("This document.", _ok({"type": "object"}), name=False),
        "/api/session": _get(
            "A CSRF token, for scripts that POST with a session cookie.",
            _ok(_ref("Session")),
            name=False,
        ),
        "/api/overview": {
            "get": {
                "summary": "Everything the page shows: all summaries, one project's detail.",
                "parameters": [
                    {
                        "name": "project",
                        "in": "query",
                        "schema": _STR,
                        "description": "The project to detail (default: the first).",
                    }
                ],
                "responses": {"200": _ok(_ref("Overview")), **_GUARDED},
            }
        },
        "/api/projects": _get("Every project's summary.", _ok(_array(_ref("Summary"))), name=False),
        "/api/projects/{name}": _get("One project's summary.", _ok(_ref("Summary"))),
        "/api/projects/{name}/detail": _get("One project's panels.", _ok(_ref("Detail"))),
        "/api/projects/{name}/report": _get(
            "The run report.",
            _ok(_ref("Report")),
            {"404": _error("No such project, or it has no run report (yet).")},
        ),
        "/projects/{name}/report": _get(
            "The run report as a page.",
            _page("The report."),
            {"404": _error("No such project, or it has no run report (yet).")},
        ),
        "/api/projects/{name}/rate": _post(
            "Change the rate and burst, live (refused above MAX_RATE or MAX_BURST).",
            summary,
            "RateChange",
        ),
        "/api/projects/{name}/pause": _post("Pause the crawl.", summary, None),
        "/api/projects/{name}/resume": _post("Resume the crawl.", summary, None),
        "/api/projects/{name}/retry": _post(
            "Queue failed tasks again.", _ok(_ref("Retried")), "TaskFilter"
        ),
        "/api/projects/{name}/requeue-bad": _post(
            "Queue BAD tasks (moved aside as unreadable) again.",
            _ok(_ref("Requeued")),
            "TaskFilter",
        ),
    }
    for part, (what, schema) in detail_parts.items():
        paths[f"/api/projects/{{name}}/{part}"] = _get(what, _ok(_array(_ref(schema))))
    return paths


def openapi_document() -> dict[str, Any]:
    """The whole document, a fresh dict each call (callers may change theirs)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "skitter dashboard",
            "version": __version__,
            "description": (
                "The web UI's JSON API: read projects' state, change their rate, pause, "
                "resume, retry. On loopback without a token, anyone on the machine may "
                "call it; with a token, every request carries it (bearer) or a session "
                "cookie from /login, and a POST with the cookie needs X-Skitter-CSRF."
            ),
        },
        "paths": _paths(),
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "skitter_session_PORT"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-Skitter-CSRF"},
            },
        },
        "security": [{"bearer": []}, {"session": []}, {}],
    }
