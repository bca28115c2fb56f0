"""The Downloader: the middleware onion over a transport, built once per crawl.

``DOWNLOADER_MIDDLEWARES_BASE`` lists the built-ins with Scrapy's orders; the
DOWNLOADER_MIDDLEWARES setting is merged over it (``None`` switches one off) and lower
orders sit further out, so ``process_request`` runs in ascending order and
``process_response`` in descending order, as in Scrapy.

A middleware that needs to download on its own (RobotsTxtMiddleware fetches robots.txt)
defines ``bind_transport(fetch)``; the Downloader calls it with the part of the onion
*inside* that middleware, ending at the transport. Its own requests thus get the
headers, proxy, cookies and redirects of the layers below it, and never loop back
through itself. ``bind_inner(fetch)`` is the same, ending where the crawl's own
requests end (rendered or not, local, with the downloader's signals): for a middleware
that sends one request again with other settings (AutoRenderMiddleware to render it,
SessionMiddleware on a block, ProxyPoolMiddleware when a proxy is down).

Requests to render (``request.render``, or the spider's ``render`` attribute / the
BROWSER_RENDER setting) go to a ``BrowserTransport`` at the centre of the same onion;
everything else, and robots.txt always, goes to the crawl's HTTP transport
(DOWNLOAD_TRANSPORT: aiohttp, httpx, curl, or a transport factory of the user's own).
``meta["transport"]``, when set, decides for its request instead (``"browser"``
renders), except that ``render=True`` always renders; a transport other than the crawl's
is built on its first request (``_transports``). The browser starts on the first request
to render, so a crawl that renders nothing never starts Chromium. ``render="auto"`` is
AutoRenderMiddleware's: given the layers inside it (``bind_inner(fetch)``, like
``bind_transport`` but ending at this routing), it fetches over HTTP and sends a
``render=True`` copy when the page needs the browser.

``data:`` and ``file:`` requests go to ``_local`` instead of a transport, always through
an offsite guard (the schemes need the spider's ``allowed_schemes``, also when no
``allowed_domains`` restricts hosts).

Scope (``middlewares/_offsite``): OffsiteMiddleware is the outermost layer, and at the
centre, right before either transport and for what ``bind_transport`` downloads too, a
guard no setting can remove refuses every request outside ``spider.allowed_domains``.
The browser gets the same guard for the requests a page makes on its own.

Two built-ins keep a store that lives as long as the crawl: HttpCacheMiddleware
(HTTPCACHE_ENABLED) and ConditionalRecrawlMiddleware (a recrawl's validators). The
Downloader opens them in ``open`` and closes them in ``close``; the middleware contract
itself has no such hooks.

``download`` is ``fetch`` with feedback: it reports how the download went (latency,
status, Retry-After, success, robots.txt's Crawl-delay for the host) as a
``DownloadReport`` before the result or the error goes on, for the scheduler's slots.
The engine wires the two together and never reads the report.

Scrapy's downloader signals are sent around the transport, inside the middlewares:
request_reached_downloader, then response_downloaded and request_left_downloader. With
none of them connected, the centre calls the transport directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from skitter._components import build_components
from skitter._types import CrawlContext, DownloadReport
from skitter.downloader._aiohttp import AiohttpTransport
from skitter.downloader._dns import CrawlResolver, crawl_resolver
from skitter.downloader._handlers import handler_table, with_handlers
from skitter.downloader._local import LOCAL_PREFIXES, LocalHandler
from skitter.downloader._middleware import (
    DownloaderMiddleware,
    DownloadHandler,
    DownloadResult,
    compose,
)
from skitter.downloader._tls import tls_context
from skitter.downloader._transport import Transport
from skitter.downloader._transports import (
    Transports,
    built_by,
    check_name,
    own_factory,
    transport_class,
)
from skitter.downloader.browser import BrowserTransport, wants_render
from skitter.downloader.middlewares import (
    AutoRenderMiddleware,
    ConditionalRecrawlMiddleware,
    CookiesMiddleware,
    HttpCacheMiddleware,
    HttpProxyMiddleware,
    OffsiteGuard,
    OffsiteMiddleware,
    ProxyPoolMiddleware,
    RobotsTxtMiddleware,
    SessionMiddleware,
    render_default,
)
from skitter.downloader.middlewares._proxies import proxy_urls
from skitter.exceptions import ConfigError, FatalError, RetryLater
from skitter.http import Request, Response, Scope, url_host
from skitter.http.wiring import HEADERS_MARK, HELD, MARK, restore, unrestorable
from skitter.settings import DownloaderSettings, Settings
from skitter.settings.wiring import register_base_table
from skitter.signals import (
    SignalManager,
    request_left_downloader,
    request_reached_downloader,
    response_downloaded,
)

__all__ = ["DOWNLOADER_MIDDLEWARES_BASE", "Downloader"]

_PKG = "skitter.downloader"

DOWNLOADER_MIDDLEWARES_BASE: dict[str, int] = {
    f"{_PKG}.OffsiteMiddleware": 50,
    f"{_PKG}.RobotsTxtMiddleware": 100,
    f"{_PKG}.AutoRenderMiddleware": 150,
    f"{_PKG}.HttpAuthMiddleware": 300,
    f"{_PKG}.DefaultHeadersMiddleware": 400,
    f"{_PKG}.UserAgentMiddleware": 500,
    f"{_PKG}.RetryMiddleware": 550,
    f"{_PKG}.MetaRefreshMiddleware": 580,
    f"{_PKG}.HttpCompressionMiddleware": 590,
    f"{_PKG}.RedirectMiddleware": 600,
    f"{_PKG}.SessionMiddleware": 650,
    f"{_PKG}.CookiesMiddleware": 700,
    f"{_PKG}.ProxyPoolMiddleware": 740,
    f"{_PKG}.HttpProxyMiddleware": 750,
    f"{_PKG}.HttpCacheMiddleware": 900,
    f"{_PKG}.ConditionalRecrawlMiddleware": 950,
}

register_base_table("DOWNLOADER_MIDDLEWARES_BASE", DOWNLOADER_MIDDLEWARES_BASE)

_NO_AUTO = (
    "{what} is render='auto', but AutoRenderMiddleware is switched off in "
    "DOWNLOADER_MIDDLEWARES: nothing would decide which pages to render"
)


class Downloader:
    """Downloads requests through the middlewares; one per crawl (per spider).

    ``fetch`` returns a Response, or a Request meaning "schedule this instead" (a
    redirect), and raises ``RequestError`` subclasses for failures and ``CrawlControl``
    signals (``IgnoreRequest``, ``RetryLater``) from the middlewares.
    """

    def __init__(
        self,
        crawler: CrawlContext,
        spider: Any,
        transport: Transport | None = None,
        browser: Transport | None = None,
        *,
        resolver: CrawlResolver | None = None,
    ) -> None:
        settings = crawler.settings
        own_settings = settings.view(DownloaderSettings)
        signals: SignalManager = getattr(crawler, "signals", None) or SignalManager()
        #: The crawl's one TLS context (``_tls``), for every transport that speaks TLS.
        self.tls = tls_context(settings)
        #: The crawl's one resolver (``_dns``): the crawler's, shared with the per-IP slots.
        self.resolver = resolver if resolver is not None else crawl_resolver(settings)
        own = own_factory(own_settings.download_transport)
        chosen = (
            "aiohttp"
            if own is not None
            else check_name(own_settings.download_transport, "DOWNLOAD_TRANSPORT")
        )
        #: The name of the crawl's HTTP transport ("browser" renders through aiohttp's).
        self.transport_name: str = "aiohttp" if chosen == "browser" else chosen

        def build(name: str) -> Transport:
            if name == "aiohttp":
                return AiohttpTransport(
                    settings,
                    crawler.stats,
                    signals=signals,
                    spider=spider,
                    tls=self.tls,
                    resolver=self.resolver,
                )
            return transport_class(name)(
                settings, crawler.stats, signals=signals, spider=spider, resolver=self.resolver
            )

        if transport is None and own is not None:  # a transport of the user's own
            self.transport_name, transport = built_by(
                own,
                own(
                    settings,
                    crawler.stats,
                    signals=signals,
                    spider=spider,
                    resolver=self.resolver,
                ),
            )
        elif transport is None:
            transport = build(self.transport_name)
        #: The crawl's transports by name; ``meta["transport"]`` builds others on first use.
        self.transports = Transports(self.transport_name, transport, build, crawler.stats)
        self.crawler = crawler
        self.transport: Transport = transport
        #: What this crawl may download (``spider.allowed_domains``), built here, at start.
        self.scope = Scope.of(spider)
        self.middlewares: list[DownloaderMiddleware] = build_components(
            DOWNLOADER_MIDDLEWARES_BASE, own_settings.downloader_middlewares, crawler
        )
        self._spider = spider
        guard = self._offsite_guard(crawler)
        cookies = self.middleware(CookiesMiddleware)
        sessions = self.middleware(SessionMiddleware)
        if sessions is not None:
            sessions.cookies = cookies  # a retired session's jar is dropped
        if browser is None:
            browser = BrowserTransport(
                settings,
                crawler.stats,
                cookie_jars=cookies.shared_jar if cookies else None,
                offsite=guard,
            )
        self.browser: Transport = browser
        check = guard.check if guard is not None else None
        http_fetch: DownloadHandler = self.transport.fetch
        browser_fetch: DownloadHandler = self.browser.fetch
        local_check = (guard or OffsiteGuard(self.scope, crawler.stats)).check
        local_fetch = LocalHandler(settings, crawler.stats).fetch

        def local(request: Request) -> Awaitable[DownloadResult]:
            local_check(request)
            return local_fetch(request)

        def http_only(request: Request) -> Awaitable[DownloadResult]:
            meta = request.meta
            if MARK in meta:
                restore(request)  # a stored request's proxy credentials (_proxyauth)
            if HEADERS_MARK in meta:
                raise unrestorable(request)  # its credential headers (_heldheaders)
            if check is not None:
                check(request)
            return http_fetch(request)

        default = render_default(spider, own_settings.browser_render)
        if chosen == "browser" and getattr(spider, "render", None) is None:
            default = True  # DOWNLOAD_TRANSPORT = "browser" renders every request
        auto = self.middleware(AutoRenderMiddleware) is not None
        if default == "auto" and not auto:
            raise ConfigError(_NO_AUTO.format(what="the spider's render default"))
        live = signals.live
        http_name, by_name = self.transport_name, self.transports.fetch

        def chosen_fetch(name: str) -> DownloadHandler:
            if name == "browser":
                return browser_fetch
            if name == http_name:
                return http_fetch
            return lambda request: by_name(name, request)

        def route(request: Request) -> Awaitable[DownloadResult]:
            # A plain function returning the coroutine: no extra frame on the hot path.
            if request.url[:5].lower() in LOCAL_PREFIXES:
                return local(request)
            if check is not None:
                check(request)  # the last word on scope, whatever the middlewares did
            if request.render == "auto" and not auto:
                raise FatalError(_NO_AUTO.format(what=repr(request)))
            meta = request.meta
            if MARK in meta:
                restore(request)  # a stored request's proxy credentials (_proxyauth)
            if HEADERS_MARK in meta:
                raise unrestorable(request)  # its credential headers (_heldheaders)
            name = meta.get("transport")
            fetch: DownloadHandler
            if name is None or request.render is True:
                fetch = browser_fetch if wants_render(request, default) else http_fetch
            else:
                fetch = chosen_fetch(name)
            if live:
                return _signalled(signals, fetch, request, spider)
            return fetch(request)

        routed = with_handlers(route, handler_table(own_settings.download_handlers))
        for i, mw in enumerate(self.middlewares):
            inner = self.middlewares[i + 1 :]
            bind = getattr(mw, "bind_transport", None)
            if callable(bind):  # robots.txt and the like: plain HTTP, never rendered
                bind(compose(inner, http_only, spider))
            bind = getattr(mw, "bind_inner", None)
            if callable(bind):  # render='auto', sessions, proxy pools: as the crawl would
                bind(compose(inner, routed, spider))
        self._handler: DownloadHandler = compose(self.middlewares, routed, spider)
        self._hold_proxy_credentials(settings)
        self._clock = crawler.clock
        #: ROBOTSTXT_OBEY's middleware: its Crawl-delay per host goes into each report.
        self._robots: RobotsTxtMiddleware | None = self.middleware(RobotsTxtMiddleware)
        #: The HTTP cache's and the validators' middlewares: their stores open and close
        #: with the crawl.
        self._stores: list[HttpCacheMiddleware | ConditionalRecrawlMiddleware] = [
            mw
            for mw in self.middlewares
            if isinstance(mw, HttpCacheMiddleware | ConditionalRecrawlMiddleware)
        ]

    def _hold_proxy_credentials(self, settings: Settings) -> None:
        """Hold the proxy credentials every process of a job can be given alike
        (PROXY_CREDENTIALS, PROXY_LIST, the environment's proxies), for the stored
        requests whose proxy needs them back (``_proxyauth``); ConfigError at start for
        one that cannot be read."""
        given = [("PROXY_CREDENTIALS", url) for url in proxy_urls(settings, "PROXY_CREDENTIALS")]
        pool = self.middleware(ProxyPoolMiddleware)
        if pool is not None:
            given += [("PROXY_LIST", proxy.url) for proxy in pool.pool.proxies]
        environment = self.middleware(HttpProxyMiddleware)
        if environment is not None:
            given += [(f"{scheme}_proxy", url) for scheme, url in environment.proxies.items()]
        for source, url in given:
            HELD.hold(url, source)

    def _offsite_guard(self, crawler: CrawlContext) -> OffsiteGuard | None:
        """The centre's guard: OffsiteMiddleware's own (one count and log per host), or
        one of its own when the middleware is switched off; None without a scope."""
        if not self.scope.restricted:
            return None
        guard = getattr(self.middleware(OffsiteMiddleware), "guard", None)
        if isinstance(guard, OffsiteGuard) and guard.scope is self.scope:
            return guard
        return OffsiteGuard(self.scope, crawler.stats)

    async def open(self) -> None:
        await self.transport.open()
        await self.browser.open()
        for store in self._stores:
            await store.open(self._spider)

    async def close(self) -> None:
        try:
            for store in self._stores:
                await store.close()
        finally:
            try:
                await self.browser.close()
            finally:
                try:
                    await self.transports.close()
                finally:
                    await self.transport.close()

    async def __aenter__(self) -> Downloader:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def fetch(self, request: Request) -> DownloadResult:
        """Download ``request`` through every middleware."""
        return _tied(await self._handler(request), request)

    async def download(
        self, request: Request, report: Callable[[DownloadReport], Awaitable[None]]
    ) -> DownloadResult:
        """``fetch``, and ``report`` how it went before the result or the error goes on
        (also when the download is cancelled: its slot must be freed all the same)."""
        clock = self._clock
        started = clock.monotonic()
        status: int | None = None
        retry_after: float | None = None
        ok = False
        try:
            result = _tied(await self._handler(request), request)
            if isinstance(result, Response):
                status = result.status
            ok = True
            return result
        except RetryLater as exc:
            if exc.response is not None:
                status = exc.response.status
            retry_after = exc.delay
            raise
        finally:
            robots = self._robots
            await report(
                DownloadReport(
                    clock.monotonic() - started,
                    status,
                    retry_after,
                    ok,
                    robots is not None,
                    robots.crawl_delay(url_host(request.url)) if robots is not None else None,
                )
            )

    def middleware(self, cls: type) -> Any:
        """The active middleware of class ``cls`` (e.g. for ``crawl_delay``), or None."""
        for mw in self.middlewares:
            if isinstance(mw, cls):
                return mw
        return None


async def _signalled(
    signals: SignalManager, fetch: DownloadHandler, request: Request, spider: Any
) -> DownloadResult:
    """``fetch(request)`` with the downloader's signals around it."""
    live = signals.live
    if request_reached_downloader in live:
        await signals.send_catch_log_async(
            request_reached_downloader, request=request, spider=spider
        )
    try:
        result = await fetch(request)
        if response_downloaded in live and isinstance(result, Response):
            await signals.send_catch_log_async(
                response_downloaded, response=result, request=request, spider=spider
            )
        return result
    finally:
        if request_left_downloader in live:
            await signals.send_catch_log_async(
                request_left_downloader, request=request, spider=spider
            )


def _tied(result: DownloadResult, request: Request) -> DownloadResult:
    """A response a middleware made without a request answers this one (as Scrapy's
    engine ties them): callbacks read its meta and cb_kwargs."""
    if isinstance(result, Response) and result.request is None:
        result.request = request
    return result
