"""The JSON control API: read a project's state, change its rate, pause, retry, requeue.

Routes (``{name}`` is a project, i.e. a spider name)::

    GET  /api/overview?project=NAME    everything the page shows, in one response
    GET  /api/projects                 every project's summary
    GET  /api/projects/{name}          one summary
    GET  /api/projects/{name}/detail   active tasks, recent results, failures, failed, slots,
                                       proxies
    GET  /api/projects/{name}/active | recent | failures | failed | slots | proxies
    POST /api/projects/{name}/rate     {"rate": 2.5, "burst": 10}  (null = unlimited/default)
    POST /api/projects/{name}/pause
    POST /api/projects/{name}/resume
    POST /api/projects/{name}/retry    {"domain": "example.com", "reason": "HTTP 503"}
    POST /api/projects/{name}/requeue-bad  {"domain": ..., "reason": ...}: BAD tasks again
    GET  /api/projects/{name}/report   the run report (skitter.monitors), as JSON
    GET  /projects/{name}/report       the same as a page (its own CSP: one style block)
    GET  /api/session                  {"csrf": TOKEN} for scripts that POST
    GET  /api/openapi.json             this API as an OpenAPI 3.1 document (``_openapi``)

Errors are ``{"error": message}`` with 400 (bad input, or a rate above MAX_RATE; the
message is the crawler's own), 404 (no such project), 409 (the project is not
running, or a cluster job's state is gone from Redis) or 503 (a cluster job's Redis
cannot be reached). Every POST needs the
``X-Skitter-CSRF`` header (see ``_security``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from skitter.dashboard._openapi import openapi_document
from skitter.dashboard._security import Guard, json_error
from skitter.dashboard._views import project_detail, project_summary
from skitter.exceptions import ConfigError, FatalError, FrontierUnavailable, JobStateLost
from skitter.monitors import render_html
from skitter.monitors.wiring import STYLE_HASH

if TYPE_CHECKING:
    from skitter.dashboard._live import LiveProject

__all__ = ["ControlApi"]

MAX_BODY = 16 * 1024
#: The report page's policy: nothing but its own style block.
REPORT_CSP = f"default-src 'none'; style-src {STYLE_HASH}; base-uri 'none'; frame-ancestors 'none'"
_DETAIL_PARTS = ("active", "recent", "failures", "failed", "slots", "proxies")


class _BadInput(Exception):
    """A request body the API cannot use; its message goes back to the client."""


class ControlApi:
    """Handlers over a list of projects (``LiveProject``), looked up by name."""

    def __init__(
        self, projects: Sequence[LiveProject], guard: Guard, clock: Callable[[], float]
    ) -> None:
        self._crawlers = projects  # read on every request: it may grow (cluster jobs)
        self._guard = guard
        self._now = clock

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/api/session", self.session)
        router.add_get("/api/openapi.json", self.openapi)
        router.add_get("/api/overview", self.overview)
        router.add_get("/api/projects", self.projects)
        router.add_get("/api/projects/{name}", self.project)
        router.add_get("/api/projects/{name}/detail", self.detail)
        for part in _DETAIL_PARTS:
            router.add_get(f"/api/projects/{{name}}/{part}", self._detail_part(part))
        router.add_post("/api/projects/{name}/rate", self.set_rate)
        router.add_post("/api/projects/{name}/pause", self.pause)
        router.add_post("/api/projects/{name}/resume", self.resume)
        router.add_post("/api/projects/{name}/retry", self.retry)
        router.add_post("/api/projects/{name}/requeue-bad", self.requeue_bad)
        router.add_get("/api/projects/{name}/report", self.report)
        router.add_get("/projects/{name}/report", self.report_page)

    @property
    def crawlers(self) -> list[LiveProject]:
        return list(self._crawlers)

    # -- reading ------------------------------------------------------------------------
    async def session(self, request: web.Request) -> web.Response:
        return _json({"csrf": self._guard.issue_csrf()})

    async def openapi(self, request: web.Request) -> web.Response:
        return _json(openapi_document())

    async def overview(self, request: web.Request) -> web.Response:
        """Summaries of all projects plus the detail of one (the first by default): the
        page polls this once a second."""
        wanted = request.query.get("project")
        chosen = self._find(wanted) if wanted else None
        if chosen is None and self._crawlers:
            chosen = self._crawlers[0]
        return _json(
            {
                "now": self._now(),
                "projects": [await project_summary(c) for c in self._crawlers],
                "detail": await project_detail(chosen) if chosen is not None else None,
            }
        )

    async def projects(self, request: web.Request) -> web.Response:
        return _json([await project_summary(c) for c in self._crawlers])

    async def project(self, request: web.Request) -> web.Response:
        crawler = self._get(request)
        return _json(await project_summary(crawler))

    async def detail(self, request: web.Request) -> web.Response:
        return _json(await project_detail(self._get(request)))

    def _detail_part(self, part: str) -> Callable[[web.Request], Any]:
        key = "failed_tasks" if part == "failed" else part

        async def handler(request: web.Request) -> web.Response:
            return _json((await project_detail(self._get(request)))[key])

        handler.__name__ = f"get_{part}"
        return handler

    async def report(self, request: web.Request) -> web.Response:
        return _json(self._report(request))

    async def report_page(self, request: web.Request) -> web.Response:
        return web.Response(
            text=render_html(self._report(request)),
            content_type="text/html",
            headers={"Content-Security-Policy": REPORT_CSP, "Cache-Control": "no-store"},
        )

    def _report(self, request: web.Request) -> dict[str, Any]:
        project = self._get(request)
        report: dict[str, Any] | None = getattr(project, "report", None)
        if report is None:
            raise _Problem(
                404, f"project {project.name!r} has no run report (no monitors, or not run yet)"
            )
        return report

    # -- changing -------------------------------------------------------------------------
    async def set_rate(self, request: web.Request) -> web.Response:
        crawler = self._running(request)
        body = await _body(request)
        rate = _number_or_none(body, "rate")
        burst = _number_or_none(body, "burst")
        try:
            await _done(crawler.set_rate(rate, burst))
        except ConfigError as exc:
            raise _BadInput(str(exc)) from None
        return _json(await project_summary(crawler))

    async def pause(self, request: web.Request) -> web.Response:
        crawler = self._running(request)
        await _body(request)
        await _done(crawler.pause())
        return _json(await project_summary(crawler))

    async def resume(self, request: web.Request) -> web.Response:
        crawler = self._running(request)
        await _body(request)
        await _done(crawler.resume())
        return _json(await project_summary(crawler))

    async def retry(self, request: web.Request) -> web.Response:
        crawler = self._running(request)
        body = await _body(request)
        domain = _text_or_none(body, "domain")
        reason = _text_or_none(body, "reason")
        count = await crawler.retry_failed(domain=domain, reason=reason)
        return _json({"retried": count})

    async def requeue_bad(self, request: web.Request) -> web.Response:
        crawler = self._running(request)
        body = await _body(request)
        domain = _text_or_none(body, "domain")
        reason = _text_or_none(body, "reason")
        count = await crawler.requeue_bad(domain=domain, reason=reason)
        return _json({"requeued": count})

    # -- lookup ---------------------------------------------------------------------------
    def _find(self, name: str) -> LiveProject | None:
        return next((c for c in self._crawlers if c.name == name), None)

    def _get(self, request: web.Request) -> LiveProject:
        name = request.match_info["name"]
        crawler = self._find(name)
        if crawler is None:
            raise _Problem(404, f"no project named {name!r}")
        return crawler

    def _running(self, request: web.Request) -> LiveProject:
        crawler = self._get(request)
        status = crawler.status
        if status == "new":
            raise _Problem(409, f"project {crawler.name!r} has not started yet")
        if status in ("done", "failed", "monitors_failed"):
            raise _Problem(409, f"project {crawler.name!r} has finished")
        return crawler

    @web.middleware
    async def errors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Turn the API's own exceptions into ``{"error": ...}`` responses."""
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except _Problem as exc:
            return json_error(exc.status, exc.message)
        except _BadInput as exc:
            return json_error(400, str(exc))
        except JobStateLost as exc:  # a cluster job whose state vanished
            return json_error(409, str(exc))
        except (FrontierUnavailable, FatalError) as exc:  # a cluster's Redis: restarting,
            return json_error(503, str(exc))  # out of memory, refusing the credentials


class _Problem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _json(data: Any) -> web.Response:
    return web.Response(
        body=orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def _body(request: web.Request) -> dict[str, Any]:
    """The JSON object in the body ({} when empty); anything else is a 400."""
    raw = await request.read()
    if not raw.strip():
        return {}
    if request.content_type != "application/json":
        raise _BadInput(f"send JSON (Content-Type: application/json), not {request.content_type}")
    if len(raw) > MAX_BODY:
        raise _BadInput(f"the body is larger than {MAX_BODY} bytes")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _BadInput(f"the body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _BadInput("the body must be a JSON object")
    return data


def _number_or_none(body: dict[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _BadInput(f"{key} must be a number or null, got {value!r}")
    return float(value)


def _text_or_none(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _BadInput(f"{key} must be a string or null, got {value!r}")
    return value


async def _done(result: object) -> None:
    """Wait for a control call that returned an awaitable (a cluster job's Redis write)."""
    if inspect.isawaitable(result):
        await result
