"""``Dashboard``: the web UI, JSON API and ``/metrics`` of running crawlers.

It is an aiohttp application on the crawl's own event loop, so it reads the projects'
live state directly (no IPC, no copies) and a rate change applies to the next dispatch::

    crawler = Crawler(MySpider)
    async with Dashboard([crawler.control]) as ui:
        print("dashboard at", ui.url)
        await crawler.run()

**Live updates are polled**, once a second, from one ``/api/overview`` request that
returns everything on screen. Server-sent events would save a few requests but cannot
carry an ``Authorization`` header (``EventSource`` has no way to set one), would keep a
connection per tab open across ``stop()``, and would push snapshots even to a hidden
tab; a poll costs the crawl nothing while nobody is watching, recovers by itself after
a restart, and one request per second is far below what a person can read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from importlib import resources
from types import TracebackType
from typing import TYPE_CHECKING, Self

from aiohttp import web

from skitter.dashboard._api import MAX_BODY, ControlApi
from skitter.dashboard._metrics import CONTENT_TYPE, render_metrics
from skitter.dashboard._security import Guard, Handler, check_exposure
from skitter.exceptions import ConfigError

if TYPE_CHECKING:
    from skitter.dashboard._live import LiveProject

__all__ = ["Dashboard"]

log = logging.getLogger("skitter.dashboard")

#: Files under ``static/`` that are served, with their types; nothing else is.
_STATIC = {
    "dashboard.css": "text/css",
    "dashboard.js": "text/javascript",
    "favicon.svg": "image/svg+xml",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Nothing leaves for another site; same-origin requests keep their Origin (under
    # no-referrer, Chromium sends the login form's POST with "Origin: null", refused).
    "Referrer-Policy": "same-origin",
}


def _read_static(name: str) -> bytes:
    return resources.files("skitter.dashboard").joinpath("static", name).read_bytes()


class Dashboard:
    """Serves the dashboard of ``projects`` on ``host:port`` (0 = a free port): each a
    ``LiveProject``, a crawler's ``control`` or a ``ClusterProject``.

    Listening on anything but loopback needs ``token``; every request must then carry
    it (``Authorization: Bearer TOKEN``, or a session from ``/login``).

    ``projects`` is read afresh on every request, so it may be a live sequence that
    changes (``ClusterSource`` adds jobs as they appear); such a one may start empty,
    given a ``clock`` (epoch seconds) for the page's "updated" time.
    """

    def __init__(
        self,
        projects: Sequence[LiveProject],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        check_exposure(host, token)
        if not projects and clock is None:
            raise ValueError("the dashboard needs at least one project")
        self.host = host
        self.port = port
        self.guard = Guard(token)
        now = clock if clock is not None else (lambda: projects[0].clock.time())
        self.api = ControlApi(projects, self.guard, clock=now)
        self._projects = projects if clock is not None else list(projects)
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self._files = {name: _read_static(name) for name in _STATIC}
        self._index = _read_static("index.html").decode()
        self._login = _read_static("login.html")

    @property
    def url(self) -> str:
        """``http://host:port/`` once started."""
        if self._url is None:
            raise RuntimeError("the dashboard is not started")
        return self._url

    def make_app(self) -> web.Application:
        app = web.Application(
            middlewares=[_security_headers, self.guard.middleware, self.api.errors],
            client_max_size=MAX_BODY,
        )
        router = app.router
        router.add_get("/", self.index)
        router.add_get("/login", self.login_page)
        router.add_post("/login", self.login)
        router.add_get("/static/{name}", self.static)
        router.add_get("/metrics", self.metrics)
        self.api.add_routes(router)
        return app

    # -- lifetime -------------------------------------------------------------------------
    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("the dashboard is already started")
        runner = web.AppRunner(self.make_app(), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigError(
                f"the dashboard cannot listen on {self.host}:{self.port}: {exc}"
            ) from exc
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self.guard.cookie_name = f"skitter_session_{port}"  # cookies ignore ports
        shown = f"[{host}]" if ":" in host else host
        self._url = f"http://{shown}:{port}/"
        log.debug("Dashboard at %s", self._url)

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- pages ----------------------------------------------------------------------------
    async def index(self, request: web.Request) -> web.Response:
        # The CSRF token is URL-safe base64 and hex, so it needs no HTML escaping.
        page = self._index.replace("{{csrf}}", self.guard.issue_csrf())
        return web.Response(
            text=page, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def login_page(self, request: web.Request) -> web.StreamResponse:
        if self.guard.token is None:
            raise web.HTTPSeeOther("/")
        if "token" in request.query:
            # The token never travels in a URL (history, Referer, proxy logs): such a
            # link logs nobody in, whatever it holds; the form POSTs it instead.
            return self._login_form(400, "The token goes in the form below, not in the URL.")
        return web.Response(
            body=self._login, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def login(self, request: web.Request) -> web.StreamResponse:
        if self.guard.token is None:
            raise web.HTTPSeeOther("/")
        form = await request.post()
        token = form.get("token")
        if isinstance(token, str) and self.guard.token_matches(token):
            response = web.Response(status=303, headers={"Location": "/"})
            self.guard.login_cookie(response, secure=request.secure)
            return response
        return self._login_form(401, "Wrong token.")

    def _login_form(self, status: int, error: str) -> web.Response:
        note = f'<p class="error">{error}</p>'.encode()
        page = self._login.replace(b"<!--error-->", note)
        return web.Response(
            status=status,
            body=page,
            content_type="text/html",
            headers={"Cache-Control": "no-store"},
        )

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = self._files.get(name)
        if body is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=body, content_type=_STATIC[name], headers={"Cache-Control": "no-cache"}
        )

    async def metrics(self, request: web.Request) -> web.Response:
        text = await render_metrics(self._projects)
        response = web.Response(text=text)
        response.headers["Content-Type"] = CONTENT_TYPE
        return response


@web.middleware
async def _security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """CSP and friends on every response, including errors: even if a crawled string
    ever reached the DOM as markup, inline scripts and handlers would not run."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(_SECURITY_HEADERS)
        raise
    for name, value in _SECURITY_HEADERS.items():  # a page with its own CSP (the report)
        response.headers.setdefault(name, value)
    return response
