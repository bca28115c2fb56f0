"""ProxyPoolMiddleware: every request through a proxy of PROXY_LIST, in turn or by tier.

The pool (``_proxies.ProxyPool``) chooses; this middleware (order 740, inside cookies,
right outside HttpProxyMiddleware) sets ``meta["proxy"]`` and watches what happens:

- a ``ConnectError`` through a proxy marks it down (PROXY_BACKOFF) and the request goes
  at once to the next proxy: nothing reached the site, so this is no attempt of the
  request's. When every proxy has been tried, the last error goes on (and
  RetryMiddleware retries it later, as any network error);
- a ``DownloadTimeout`` marks the proxy down too, but the error goes on: the request
  may have reached the site, and waiting out another full timeout at once would double
  the request's time; its retry goes to another proxy;
- a response that is a block (``_blocks``) is counted against the proxy; with tiered
  rotation the host moves a tier up, and a request without a session is sent again at
  once on the new tier (with a session, SessionMiddleware retries it on a fresh session,
  which starts on the new tier).

A request that sets ``meta["proxy"]`` itself (a URL, or None for "direct") keeps it.
``meta["_proxy_pool"]`` records the proxy by its index: a session keeps its proxy
through it, and a stored request keeps only it; ``meta["_scheme_proxy"]`` (the mark of
a proxy the worker chose) keeps the URL, with its credentials, out of the job's store
and Redis, and a redirect to another scheme picks again. Stats, per proxy by its label
(never its URL): ``proxy/<label>/requests``, ``.../failures``, ``.../blocks``.
"""

from __future__ import annotations

from typing import Any

from skitter._types import CrawlContext, StatsSink
from skitter.downloader._middleware import DownloadHandler, DownloadResult
from skitter.downloader.middlewares._blocks import BlockDetector
from skitter.downloader.middlewares._proxies import (
    Proxy,
    ProxyPool,
    check_rotation,
    proxy_tiers,
)
from skitter.exceptions import ConnectError, DownloadTimeout, NotConfigured
from skitter.http import Request, Response, url_host
from skitter.settings import SessionSettings

__all__ = ["ProxyPoolMiddleware"]

#: meta key: the index of the pool's proxy a request went through (or goes through next).
POOL_KEY = "_proxy_pool"
_ENV_PROXY_FLAG = "_scheme_proxy"


class ProxyPoolMiddleware:
    """Sends requests through PROXY_LIST's proxies, skipping those that are down."""

    def __init__(self, pool: ProxyPool, blocks: BlockDetector, stats: StatsSink) -> None:
        self.pool = pool
        self._blocks = blocks
        self._stats = stats
        self._fetch: DownloadHandler | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> ProxyPoolMiddleware:
        settings = crawler.settings
        own = settings.view(SessionSettings)
        rotation = check_rotation(str(own.proxy_rotation))  # a typo is refused, used or not
        if own.proxy_list is None:
            raise NotConfigured
        pool = ProxyPool(
            proxy_tiers(own.proxy_list),
            crawler.clock,
            rotation=rotation,
            backoff=float(own.proxy_backoff),
            fallback_after=int(own.proxy_tier_fallback),
        )
        return cls(pool, BlockDetector.from_settings(settings, crawler.spider), crawler.stats)

    def bind_inner(self, fetch: DownloadHandler) -> None:
        """Called by the Downloader with the onion inside this middleware."""
        self._fetch = fetch

    async def process_request(self, request: Request, spider: Any = None) -> DownloadResult | None:
        meta = request.meta
        if "proxy" in meta and POOL_KEY not in meta:
            return None  # the spider's own proxy, or None for a direct request
        if not request.url[:8].lower().startswith(("http://", "https://")):
            return None  # data: and file: are not fetched over a network
        fetch = self._fetch
        assert fetch is not None, "bind_inner was not called"
        pool, stats = self.pool, self._stats
        host = url_host(request.url)
        prefer = meta.get(POOL_KEY)
        tried: set[int] = set()
        while True:
            proxy = pool.pick(host, prefer if isinstance(prefer, int) else None, frozenset(tried))
            assert proxy is not None  # while one is untried (see below)
            meta["proxy"] = proxy.url
            meta[_ENV_PROXY_FLAG] = True
            meta[POOL_KEY] = proxy.index
            tried.add(proxy.index)
            pool.sent(proxy)
            stats.inc(f"proxy/{proxy.label}/requests")
            try:
                result = await fetch(request)
            except ConnectError:
                self._failed(proxy, host)
                if len(tried) == len(pool.proxies):
                    raise  # every proxy failed to connect for this request
                prefer = None
                continue
            except DownloadTimeout:
                self._failed(proxy, host)
                raise
            if not isinstance(result, Response):
                return result
            tier = pool.tier_of(host)
            reason = await self._blocks(result)
            if reason is None:
                pool.succeeded(proxy, host)
                return result
            pool.blocked(proxy, host)
            stats.inc(f"proxy/{proxy.label}/blocks")
            if "session_id" in meta or pool.tier_of(host) <= tier:
                return result  # nowhere better to go now (or SessionMiddleware's to retry)
            stats.inc("proxy/tier_escalations")
            prefer = None
            tried.clear()

    def _failed(self, proxy: Proxy, host: str) -> None:
        self.pool.failed(proxy, host)
        self._stats.inc(f"proxy/{proxy.label}/failures")
        self._stats.inc("proxy/marked_down")
