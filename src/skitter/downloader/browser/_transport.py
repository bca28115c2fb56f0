"""The browser transport: a Request rendered by headless Chromium, as a Response.

Requests with ``render=True`` (or every request of a spider whose ``render`` attribute
or the BROWSER_RENDER setting says so, unless ``meta["dont_render"]``) come here instead
of to ``AiohttpTransport``, under the same downloader middlewares. The contract is
``Transport``'s (``downloader/_transport``): ``fetch`` returns the response for any
status and raises one of skitter's errors naming the request. What differs, and why:

- ``body`` is the rendered DOM (``page.content()``, UTF-8; ``Content-Type`` says so,
  since the server's charset no longer describes it), not the bytes the server sent.
  A main document that is not HTML (JSON, XML, an image) is returned as the browser
  received it. ``status`` and ``headers`` are the main document's, ``url`` the page's
  final URL, ``flags`` holds ``"rendered"``.
- The browser follows redirects itself (RedirectMiddleware sees the final response);
  the URLs left behind are recorded in ``meta["redirect_urls"]`` as it would.
- Headers the middlewares set are sent with the main document; ``User-Agent`` becomes
  the page's user agent (JavaScript and sub-requests see it too). ``Cookie``,
  ``Accept-Encoding`` and the other headers the browser manages are left to it.
- Cookies: each page starts in a fresh browser context. With BROWSER_SHARE_COOKIES it is
  seeded from CookiesMiddleware's jar (per ``meta["cookiejar"]``) and its cookies go back
  into the jar when the page is done; without, the page starts with none, and the main
  document's ``Set-Cookie`` headers are removed so the HTTP jar stays separate too.
- DOWNLOAD_TIMEOUT (``meta["download_timeout"]``) bounds the page from navigation until
  its HTML is read: a page that never finishes loading fails with DownloadTimeout, which
  RetryMiddleware retries. DOWNLOAD_MAXSIZE bounds the rendered HTML (an endless main
  document cannot be cut off mid-body by the browser: it ends at the timeout), and
  DOWNLOAD_MAX_HEADERS_SIZE the main document's headers, as over HTTP.
- TLS: DOWNLOAD_VERIFY_CERTIFICATES holds here too (off: the page's context ignores
  certificate errors, as the HTTP transport does). Chromium does not take the crawl's
  TLS versions, ciphers or client certificate; a crawl that sets them and renders is
  warned once.
- A browser that dies under a page fails that request with ConnectionLost (retried by
  the scheduler); the next request starts Chromium again. Nothing is lost.
- Scope: given the Downloader's offsite guard, every request the page makes, redirect
  hops included, is held to ``allowed_domains`` (``_scope``): a main document
  sent offsite fails the request as offsite (IgnoreRequest), offsite sub-resources are
  not loaded (``browser/offsite_blocked``).

Per-request meta keys:

``browser_wait_until``  ``"load"`` (default: BROWSER_WAIT_UNTIL), ``"domcontentloaded"``,
                        ``"networkidle"`` or ``"commit"``: when navigation counts as done
``browser_wait_for``    a CSS selector to wait for after that (content built late by
                        JavaScript); not appearing in time is a DownloadTimeout
``browser_keep_page``   hand the live Playwright page to the callback as
                        ``response.meta["browser_page"]`` (for clicks, scrolls, waits in an
                        async callback). The callback MUST ``await page.close()``: an open
                        page holds one of BROWSER_CONCURRENCY slots. Only pages with a
                        status below 400 are kept (others rarely reach a callback); leftover
                        pages are closed when the crawl ends.

Stats: the HTTP transport's ``downloader/*`` keys, plus ``browser/page_count``,
``browser/launch_count``, ``browser/restart_count``, ``browser/blocked_request_count``
and ``browser/offsite_blocked``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from multidict import CIMultiDict
from yarl import URL

from skitter.downloader._streaming import split_proxy
from skitter.downloader._transport import TransportStats, headers_too_large
from skitter.downloader.browser._cookies import cookies_for_browser, store_browser_cookies
from skitter.downloader.browser._errors import is_playwright_error, timed_out, translate
from skitter.downloader.browser._launch import BrowserUnavailable
from skitter.downloader.browser._pool import BrowserPool, PageLease
from skitter.downloader.browser._routes import page_router
from skitter.downloader.browser._scope import PageGuard
from skitter.exceptions import (
    ConfigError,
    ConnectionLost,
    DownloadTimeout,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import RenderMode, Request, Response, response_class
from skitter.settings import BrowserSettings, DownloaderSettings

if TYPE_CHECKING:
    from aiohttp import CookieJar
    from playwright.async_api import Response as PageResponse

    from skitter._types import StatsSink
    from skitter.downloader.middlewares._offsite import OffsiteGuard
    from skitter.settings import Settings

__all__ = ["BrowserTransport", "wants_render"]

_CLOSE_TIMEOUT = 5.0
_PAGE_WAIT = 30.0  # seconds a request may wait for a browser page, at least

logger = logging.getLogger("skitter.downloader.browser")

WAIT_UNTIL = frozenset({"load", "domcontentloaded", "networkidle", "commit"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
CookieJars = Callable[[Hashable], "CookieJar"]


def wants_render(request: Request, default: RenderMode) -> bool:
    """Whether ``request`` goes to the browser: ``render=True``, or the spider's default
    ``True`` unless ``meta["dont_render"]`` opts this request out. ``"auto"`` (the
    request's or the default) is AutoRenderMiddleware's to decide: it sends a copy with
    ``render=True`` when the page needs the browser, so "auto" itself goes over HTTP."""
    render = request.render
    if render is True:
        return True
    return render is False and default is True and not request.meta.get("dont_render")


class BrowserTransport:
    """Renders requests in headless Chromium; same contract as ``AiohttpTransport``.

    ``cookie_jars(key)`` is CookiesMiddleware's ``jar`` method: given, and with
    BROWSER_SHARE_COOKIES on, pages share that spider's cookie session. ``offsite`` is
    the Downloader's guard: given (with ``allowed_domains``), pages stay in its scope.
    """

    def __init__(
        self,
        settings: Settings,
        stats: StatsSink,
        *,
        cookie_jars: CookieJars | None = None,
        offsite: OffsiteGuard | None = None,
    ) -> None:
        self._stats = stats
        self._counts = TransportStats(stats)
        self._offsite = offsite if offsite is not None and offsite.scope.restricted else None
        self._offsite_seen: set[str] = set()
        self._pool = BrowserPool(settings, stats)
        limits, own = settings.view(DownloaderSettings), settings.view(BrowserSettings)
        self._timeout: float = limits.download_timeout
        self._maxsize: int = limits.download_maxsize
        self._warnsize: int = limits.download_warnsize
        self._max_headers_size: int = limits.download_max_headers_size
        self._blocked = frozenset(str(kind).lower() for kind in own.browser_block_resources)
        self._wait_until: str = own.browser_wait_until
        self._ignore_https_errors = not limits.download_verify_certificates
        self._tls_unhonoured = [
            name
            for name in (
                "DOWNLOAD_TLS_MIN_VERSION",
                "DOWNLOAD_TLS_MAX_VERSION",
                "DOWNLOAD_CLIENT_CERT",
            )
            if settings[name]
        ]
        if self._wait_until not in WAIT_UNTIL:
            raise ConfigError(
                f"BROWSER_WAIT_UNTIL must be one of {sorted(WAIT_UNTIL)}, got {self._wait_until!r}"
            )
        self._cookie_jars = cookie_jars if own.browser_share_cookies else None
        if own.browser_share_cookies and cookie_jars is None:
            logger.warning(
                "BROWSER_SHARE_COOKIES is on but CookiesMiddleware is not: "
                "rendered pages get no cookies"
            )
        self._unavailable_logged = False

    @property
    def started(self) -> bool:
        """True once Chromium runs: stays False for a crawl that renders nothing."""
        return self._pool.started

    @property
    def pool(self) -> BrowserPool:
        return self._pool

    # -- lifetime: Chromium starts on the first fetch, not here ---------------------------
    async def open(self) -> None:
        return None

    async def close(self) -> None:
        await self._pool.close()

    async def __aenter__(self) -> BrowserTransport:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- fetching ---------------------------------------------------------------------
    async def fetch(self, request: Request) -> Response:
        """Render ``request``; return the response whatever its status."""
        counts = self._counts
        counts.request(request)
        try:
            response = await self._render(request)
        except RequestError as exc:
            counts.exception(exc)
            raise
        counts.response(response)
        return response

    def _timeout_of(self, request: Request) -> float | None:
        value = request.meta.get("download_timeout")
        return (value if value is not None else self._timeout) or None

    async def _render(self, request: Request) -> Response:
        if not request.url[:8].lower().startswith(("http://", "https://")):
            raise InvalidURL(
                f"cannot render {request!r}: only http:// and https:// URLs are supported",
                request=request,
            )
        if self._tls_unhonoured:
            logger.warning(
                "rendered pages do not use %s (Chromium's own TLS settings apply)",
                ", ".join(self._tls_unhonoured),
            )
            self._tls_unhonoured = []
        meta = request.meta
        wait_until = meta.get("browser_wait_until") or self._wait_until
        if wait_until not in WAIT_UNTIL:
            raise RequestError(
                f"cannot render {request!r}: meta['browser_wait_until'] must be one of "
                f"{sorted(WAIT_UNTIL)}, got {wait_until!r}",
                request=request,
            )
        timeout = self._timeout_of(request)
        # Waiting for a page is not downloading: Chromium takes seconds to start (more on
        # a busy machine), so the wait gets at least _PAGE_WAIT; it is bounded all the
        # same, since a browser being (re)started after a crash may never answer.
        page_wait = None if timeout is None else max(timeout, _PAGE_WAIT)
        try:
            async with asyncio.timeout(page_wait):
                lease = await self._pool.acquire(
                    **_context_options(request), ignore_https_errors=self._ignore_https_errors
                )
        except TimeoutError:
            raise DownloadTimeout(
                f"{request!r}: no browser page within {page_wait} seconds (Chromium starting?)",
                request=request,
            ) from None
        except BrowserUnavailable as exc:
            if not self._unavailable_logged:
                self._unavailable_logged = True
                logger.error("Cannot render pages: %s", exc)
            raise RequestError(f"cannot render {request!r}: {exc}", request=request) from None
        except Exception as exc:
            if not is_playwright_error(exc):
                raise
            raise translate(exc, request, None, timeout) from None
        from playwright.async_api import Error as PlaywrightError  # imported by now

        kept = False
        try:
            if timeout is not None:
                lease.context.set_default_timeout(timeout * 1000)
            try:
                async with asyncio.timeout(timeout):
                    response = await self._navigate(lease, request, wait_until)
            except TimeoutError:
                raise timed_out(request, wait_until, timeout) from None
            except PlaywrightError as exc:
                raise translate(exc, request, lease, timeout) from None
            if meta.get("browser_keep_page") and response.status < 400:
                lease.keep()
                meta["browser_page"] = lease.page
                kept = True
            return response
        finally:
            if not kept:
                # The page of a browser that just died may never confirm its closing.
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(_CLOSE_TIMEOUT):
                        await lease.close()

    async def _navigate(self, lease: PageLease, request: Request, wait_until: str) -> Response:
        page, meta = lease.page, request.meta
        jar = self._jar_for(request)
        if jar is not None and len(jar):
            await lease.context.add_cookies(cookies_for_browser(jar))  # type: ignore[arg-type]
        guard = None
        if self._offsite is not None:
            guard = await PageGuard.attach(
                lease, self._offsite.scope, self._stats, self._offsite_seen
            )
        await page.route("**/*", page_router(page, request, self._blocked, self._stats, guard))
        started = time.monotonic()
        try:
            main = await page.goto(request.url, wait_until=wait_until)  # type: ignore[arg-type]
            selector = meta.get("browser_wait_for")
            if selector:
                await page.wait_for_selector(selector, state="attached")
        except Exception:
            self._check_navigation(request, guard)  # "blocked by client" means offsite
            raise
        if main is None:  # no network navigation happened (cannot be for http URLs)
            raise ConnectionLost(f"{request!r}: the browser loaded no document", request=request)
        meta["download_latency"] = _latency(main, started)
        _record_redirects(main, meta)
        pairs = await main.headers_array()
        if self._max_headers_size:
            size = sum(len(h["name"]) + len(h["value"]) for h in pairs)
            if size > self._max_headers_size:
                raise headers_too_large(request, size, self._max_headers_size)
        headers = CIMultiDict((h["name"], h["value"]) for h in pairs)
        for name in ("Content-Encoding", "Content-Length"):
            headers.popall(name, None)  # describe the network bytes, not this body
        if jar is None:
            headers.popall("Set-Cookie", None)  # the browser's cookies are not the jar's
        content_type = headers.get("Content-Type", "")
        mime = content_type.split(";", 1)[0].strip().lower()
        if not mime or mime in _HTML_TYPES:
            body = (await page.content()).encode("utf-8")
            headers["Content-Type"] = f"{mime or 'text/html'}; charset=utf-8"
            flags = ["rendered"]
        else:
            body = await main.body()
            flags = ["browser"]
        self._check_navigation(request, guard)  # sent elsewhere before the DOM was read
        self._check_size(request, len(body))
        if jar is not None:
            store_browser_cookies(jar, await lease.context.cookies())
        server = await main.server_addr()
        return response_class(headers, page.url, body)(
            page.url,
            main.status,
            headers,
            body,
            request,
            flags=flags,
            ip_address=server["ipAddress"] if server else None,
        )

    def _check_navigation(self, request: Request, guard: PageGuard | None) -> None:
        if guard is not None and guard.refused_navigation is not None:
            assert self._offsite is not None
            self._offsite.refuse(request, guard.refused_navigation, "the page was sent there")

    def _jar_for(self, request: Request) -> CookieJar | None:
        jars = self._cookie_jars
        if jars is None or request.meta.get("dont_merge_cookies"):
            return None
        return jars(request.meta.get("cookiejar"))

    def _check_size(self, request: Request, size: int) -> None:
        maxsize = request.meta.get("download_maxsize", self._maxsize)
        if maxsize and size > maxsize:
            raise ResponseTooLarge(
                f"{request!r}: rendered page of {size} bytes is larger than DOWNLOAD_MAXSIZE "
                f"({maxsize} bytes)",
                request=request,
            )
        warnsize = request.meta.get("download_warnsize", self._warnsize)
        if warnsize and size > warnsize:
            logger.warning(
                "%r: rendered page of %d bytes is larger than DOWNLOAD_WARNSIZE (%d bytes)",
                request,
                size,
                warnsize,
            )


def _context_options(request: Request) -> dict[str, Any]:
    """Options of the page's fresh context: user agent, proxy, no service workers (they
    would answer requests from their cache, past the router)."""
    options: dict[str, Any] = {"service_workers": "block"}
    if request.has_headers:
        user_agent = request.headers.text("User-Agent")
        if user_agent:
            options["user_agent"] = user_agent
    proxy = request.meta.get("proxy")
    if proxy:
        bare, auth = split_proxy(proxy)  # the credentials as skitter reads them
        server: dict[str, str] = {"server": str(URL(bare).with_path(""))}
        if auth is not None:
            server["username"], server["password"] = auth
        options["proxy"] = server
    return options


def _latency(main: PageResponse, started: float) -> float:
    """Seconds until the main document's headers came, as the HTTP transport reports."""
    timing = main.request.timing
    response_start = timing.get("responseStart", -1)
    if response_start is not None and response_start >= 0:
        return response_start / 1000
    return time.monotonic() - started


def _record_redirects(main: PageResponse, meta: dict[str, Any]) -> None:
    """Put the redirects the browser followed where RedirectMiddleware would."""
    urls: list[str] = []
    previous = main.request.redirected_from
    while previous is not None:
        urls.append(previous.url)
        previous = previous.redirected_from
    if urls:
        urls.reverse()
        meta["redirect_urls"] = [*meta.get("redirect_urls", ()), *urls]
        meta["redirect_times"] = meta.get("redirect_times", 0) + len(urls)
