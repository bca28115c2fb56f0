"""HttpCacheMiddleware (HTTPCACHE_ENABLED): answer from a cache of earlier responses.

Scrapy's middleware, its order (900: inside the proxy and cookies, so what is stored is
what the server sent, and a cached redirect is followed again by RedirectMiddleware),
its statistics and its meta keys:

- ``process_request``: ``meta["dont_cache"]`` bypasses the cache both ways; a request
  the policy does not cache (HTTPCACHE_IGNORE_SCHEMES, ``Cache-Control: no-store``) is
  downloaded and not stored. Otherwise the storage is asked: a miss
  (``httpcache/miss``) is downloaded, or with HTTPCACHE_IGNORE_MISSING dropped
  (``httpcache/ignore``, IgnoreRequest); a fresh entry is the answer
  (``httpcache/hit``); a stale one goes on to the server with the validators the policy
  added and waits in ``meta["cached_response"]``. A served entry has the ``cached``
  flag (``"cached" in response.flags``).
- ``process_response``: a first-hand response (``httpcache/firsthand``) is stored when
  the policy allows (``httpcache/store``, else ``httpcache/uncacheable``). Against a
  stale entry, a response the policy finds confirms it (``httpcache/revalidate``: a
  304, or a 5xx without ``must-revalidate``) serves the entry; after a 304 its headers
  are updated from the 304 (RFC 9111 §4.3.4) and stored again, so it is fresh again
  for as long as the new headers say. Anything else replaces it
  (``httpcache/invalidate``).
- ``process_exception``: a network error with a stale entry at hand serves the entry
  (``httpcache/errorrecovery``).

What is stored holds no secret unless HTTPCACHE_STORE_SECRETS says so: the headers that
carry credentials or a session (``Set-Cookie`` first: COOKIES_PERSIST = False promises
to keep cookies off the disk) are left out, and so is a user:password in the URL (the
response served for that URL gets it back); an entry an older version wrote with them
is served without them. With the setting, they are stored and served, but the cookies
of a response served from the cache never go into a cookie jar (``CACHED_COOKIES``):
they were set for an earlier run, and replaying them would log a new one in, or out.

An entry over the request's size limit (``meta["download_maxsize"]``, DOWNLOAD_MAXSIZE)
is a miss (``httpcache/too_large``): the limit is the crawl's, whatever an earlier run
allowed, and the download decides, as it would without the cache.

An entry that is there but not whole (``CorruptEntry``: a damaged file) counts as a
miss and as ``httpcache/corrupt``, and the download stores a good one over it. A read
or write that fails (a full disk, a directory that cannot be made) is counted
(``httpcache/retrieve_failed``, ``httpcache/store_failed``) and warned about, and the
crawl goes on as if there were no cache: the page is downloaded and is the callback's.

The storage's methods block (Scrapy's contract), so they run on a small pool of the
middleware's own threads: the event loop never waits on the disk, and the default
executor (DNS lookups) is not crowded out. The Downloader opens and closes the storage
with the crawl (``open`` / ``close``). With HTTPCACHE_ENABLED off the middleware takes
itself out (NotConfigured): a crawl without the cache pays nothing for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from multidict import CIMultiDict

from skitter._secrets import is_secret_header, page_url_without_userinfo
from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import IgnoreRequest, NotConfigured, TransportError
from skitter.extensions.httpcache import CorruptEntry
from skitter.http import Request, Response
from skitter.settings import DownloaderSettings, HttpCacheSettings

__all__ = ["CACHED_COOKIES", "HttpCacheMiddleware"]

#: meta key: the ``Set-Cookie`` headers of the response are the cache's, not this run's.
CACHED_COOKIES = "_cached_set_cookie"

log = logging.getLogger("skitter.httpcache")

T = TypeVar("T")


def _read_errors() -> tuple[type[Exception], ...]:
    """What a failed lookup may raise; a function, evaluated only when one is raised,
    so that a crawl without the cache never loads ``sqlite3``."""
    import sqlite3

    return (CorruptEntry, OSError, sqlite3.Error)


def _write_errors() -> tuple[type[Exception], ...]:
    """What a failed store may raise (see ``_read_errors``)."""
    import sqlite3

    return (OSError, sqlite3.Error)


#: Headers of a 304 that describe the 304 itself, not the stored body they would update.
_NOT_UPDATED = frozenset(
    ("content-length", "content-encoding", "transfer-encoding", "content-type", "connection")
)
#: Threads for the storage: enough to overlap a slow disk's latency, few enough to
#: stay out of the way of the event loop's own thread.
_THREADS = 8


class HttpCacheMiddleware:
    """Serves responses from HTTPCACHE_STORAGE as HTTPCACHE_POLICY allows."""

    def __init__(
        self,
        policy: Any,
        storage: Any,
        stats: StatsSink,
        ignore_missing: bool,
        *,
        store_secrets: bool = False,
        maxsize: int = 0,
    ) -> None:
        self.policy = policy
        self.storage = storage
        self.stats = stats
        self.ignore_missing = ignore_missing
        #: HTTPCACHE_STORE_SECRETS: keep credential headers and URLs' user:password.
        self.store_secrets = store_secrets
        #: DOWNLOAD_MAXSIZE (0: none), which ``meta["download_maxsize"]`` overrides.
        self.maxsize = maxsize
        self._executor: ThreadPoolExecutor | None = None
        self._spider: Any = None
        self._warned: set[str] = set()
        #: The crawl (Scrapy's ``mw.crawler``), when built by ``from_crawler``.
        self.crawler: Any = None

    #: The errors a stale entry at hand may answer instead (Scrapy's attribute name):
    #: the network's, never a bug's.
    DOWNLOAD_EXCEPTIONS: tuple[type[Exception], ...] = (
        TransportError,
        ConnectionError,
        TimeoutError,
    )

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpCacheMiddleware:
        settings = crawler.settings
        own = settings.view(HttpCacheSettings)
        if not own.httpcache_enabled:
            raise NotConfigured
        from skitter.extensions.httpcache import build, policy_class, storage_class

        policy = build(policy_class(own.httpcache_policy), crawler)
        storage = build(storage_class(own.httpcache_storage), crawler)
        mw = cls(
            policy,
            storage,
            crawler.stats,
            bool(own.httpcache_ignore_missing),
            store_secrets=bool(own.httpcache_store_secrets),
            maxsize=settings.view(DownloaderSettings).download_maxsize,
        )
        mw.crawler = crawler
        return mw

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        executor = self._executor
        if executor is None:
            executor = self._executor = ThreadPoolExecutor(
                _THREADS, thread_name_prefix="skitter-httpcache"
            )
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    async def open(self, spider: Any) -> None:
        """Open the storage for ``spider`` (Scrapy's ``open_spider``)."""
        self._spider = spider
        opener = getattr(self.storage, "open_spider", None)
        if callable(opener):
            await self._run(opener, spider)

    async def close(self) -> None:
        """Let every write handed to the threads finish, then close the storage."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, True)
        closer = getattr(self.storage, "close_spider", None)
        if callable(closer):
            await asyncio.to_thread(closer, self._spider)

    # -- Scrapy's synchronous API: the storage is called inline. The crawl never takes
    # -- this path (the onion prefers the ``*_async`` hooks below), so it cannot block
    # -- the event loop there; it is for code that drives the middleware by hand.
    def spider_opened(self, spider: Any) -> None:
        """Scrapy's signal handler: open the storage for ``spider`` (blocking)."""
        self._spider = spider
        opener = getattr(self.storage, "open_spider", None)
        if callable(opener):
            opener(spider)

    def spider_closed(self, spider: Any) -> None:
        """Scrapy's signal handler: close the storage (blocking)."""
        closer = getattr(self.storage, "close_spider", None)
        if callable(closer):
            closer(spider)

    def process_request(self, request: Request, spider: Any = None) -> Response | None:
        """Scrapy's hook, reading the storage on the calling thread."""
        if not self._lookup_wanted(request):
            return None
        try:
            cached = self.storage.retrieve_response(self._spider_for(spider), request)
        except _read_errors() as exc:
            self._retrieve_failed(request, exc)
            cached = None
        return self._answer(request, cached)

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        """Scrapy's hook, writing the storage on the calling thread."""
        out, to_store = self._on_response(request, response)
        if to_store is not None and (storable := self._storable(request, to_store)):
            try:
                self.storage.store_response(self._spider_for(spider), request, storable)
            except _write_errors() as exc:
                self._store_failed(request, exc)
            else:
                self.stats.inc("httpcache/store")
        return out

    # -- the crawl's hooks: the storage runs on the middleware's threads ------------
    async def process_request_async(self, request: Request, spider: Any = None) -> Response | None:
        if not self._lookup_wanted(request):
            return None
        try:
            cached: Response | None = await self._run(
                self.storage.retrieve_response, self._spider_for(spider), request
            )
        except _read_errors() as exc:
            self._retrieve_failed(request, exc)
            cached = None
        return self._answer(request, cached)

    async def process_response_async(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        out, to_store = self._on_response(request, response)
        if to_store is not None and (storable := self._storable(request, to_store)):
            try:
                await self._run(
                    self.storage.store_response, self._spider_for(spider), request, storable
                )
            except _write_errors() as exc:
                self._store_failed(request, exc)
            else:
                self.stats.inc("httpcache/store")
        return out

    # -- the decisions both share ----------------------------------------------------
    def _spider_for(self, spider: Any) -> Any:
        return spider if spider is not None else self._spider

    def _lookup_wanted(self, request: Request) -> bool:
        meta = request.meta
        if meta.get("dont_cache"):
            return False
        if not self.policy.should_cache_request(request):
            meta["_dont_cache"] = True
            return False
        return True

    def _retrieve_failed(self, request: Request, exc: Exception) -> None:
        """A read that failed is a miss: counted, and logged (once as a warning)."""
        self.stats.inc("httpcache/retrieve_error")
        if isinstance(exc, CorruptEntry):
            self.stats.inc("httpcache/corrupt")
            log.warning("corrupt cache entry for %r, treating it as a cache miss: %s", request, exc)
        else:
            self.stats.inc("httpcache/retrieve_failed")
            self._failed("read", request, exc)

    def _answer(self, request: Request, cached: Response | None) -> Response | None:
        """What ``process_request`` returns once the storage answered ``cached``."""
        meta = request.meta
        if cached is not None:
            cached = self._usable(request, cached)
        if cached is None:
            self.stats.inc("httpcache/miss")
            if self.ignore_missing:
                self.stats.inc("httpcache/ignore")
                raise IgnoreRequest(f"not in the HTTP cache: {request!r}", request=request)
            return None
        cached.flags.append("cached")
        if self.policy.is_cached_response_fresh(cached, request):
            self.stats.inc("httpcache/hit")
            if self.store_secrets:
                self._mark_cached_cookies(request, cached)
            return cached
        meta["cached_response"] = cached
        return None

    def _usable(self, request: Request, cached: Response) -> Response | None:
        """The entry as it may answer ``request``: None (a miss) when its body is over
        the request's size limit; without the secrets an older version stored, unless
        they may be kept; the user:password of the request's URL back in its URL."""
        meta = request.meta
        limit = meta.get("download_maxsize", self.maxsize) if meta else self.maxsize
        if limit and len(cached.body) > limit:
            self.stats.inc("httpcache/too_large")
            log.debug(
                "cached %r is larger than DOWNLOAD_MAXSIZE (%d bytes): downloading it",
                request,
                limit,
            )
            return None
        if not self.store_secrets:
            cached = _without_secrets(cached)
        if "@" in request.url and cached.url == page_url_without_userinfo(request.url):
            cached = cached.replace(url=request.url)
        return cached

    def _on_response(
        self, request: Request, response: Response
    ) -> tuple[Response, Response | None]:
        """The response to return and the one to store (None: nothing to store)."""
        meta = request.meta
        if meta.get("dont_cache") or "cached" in response.flags:
            return response, None  # bypassed, or the entry process_request served
        if meta.pop("_dont_cache", False):
            return response, None
        cached: Response | None = meta.pop("cached_response", None)
        if cached is None:
            self.stats.inc("httpcache/firsthand")
            return response, response
        if self.policy.is_cached_response_valid(cached, response, request):
            self.stats.inc("httpcache/revalidate")
            to_store = None
            if response.status == 304:
                cached = to_store = _refreshed(cached, response)
            if self.store_secrets:
                self._mark_cached_cookies(request, cached, fresh=response)
            return cached, to_store
        self.stats.inc("httpcache/invalidate")
        return response, response

    def process_exception(
        self, request: Request, exception: Exception, spider: Any = None
    ) -> Response | None:
        cached: Response | None = request.meta.pop("cached_response", None)
        if cached is not None and isinstance(exception, self.DOWNLOAD_EXCEPTIONS):
            self.stats.inc("httpcache/errorrecovery")
            if self.store_secrets:
                self._mark_cached_cookies(request, cached)
            return cached
        return None

    @staticmethod
    def _mark_cached_cookies(
        request: Request, served: Response, fresh: Response | None = None
    ) -> None:
        """Tell CookiesMiddleware that the ``Set-Cookie`` headers of ``served`` are the
        cache's (a 304 that sent its own replaced them: those are this run's)."""
        if served.header_list("Set-Cookie") and (
            fresh is None or not fresh.header_list("Set-Cookie")
        ):
            request.meta[CACHED_COOKIES] = True

    def _failed(self, what: str, request: Request, exc: BaseException) -> None:
        """A warning for the first failure of each kind, then debug lines (the stats
        count every one): a broken cache directory would otherwise log every request."""
        level = logging.DEBUG if what in self._warned else logging.WARNING
        self._warned.add(what)
        log.log(level, "cannot %s %r in the HTTP cache: %s", what, request, exc)

    def _storable(self, request: Request, response: Response) -> Response | None:
        """``response`` as it may be stored (without secrets unless they may be kept),
        or None when the policy does not cache it. A write that then fails (a full
        disk, a locked database) is logged and counted, and the response goes on: the
        page was downloaded, and losing it for want of a cache entry would fail the task."""
        if not self.policy.should_cache_response(response, request):
            self.stats.inc("httpcache/uncacheable")
            return None
        if not self.store_secrets:
            response = _without_secrets(response)
            if "@" in response.url:
                response = response.replace(url=page_url_without_userinfo(response.url))
        return response

    def _store_failed(self, request: Request, exc: Exception) -> None:
        self.stats.inc("httpcache/store_failed")
        self._failed("store", request, exc)


def _without_secrets(response: Response) -> Response:
    """``response`` without the headers that carry credentials or a session (the same
    copy when it has none)."""
    pairs = response.header_items()
    if not any(is_secret_header(name) for name, _ in pairs):
        return response
    kept = CIMultiDict((k, v) for k, v in pairs if not is_secret_header(k))
    return response.replace(headers=kept)


def _refreshed(cached: Response, fresh: Response) -> Response:
    """The stored response with the end-to-end headers of the 304 that confirmed it."""
    headers = CIMultiDict(cached.header_items())
    names: dict[str, str] = {}
    for name, _ in fresh.header_items():
        names.setdefault(name.lower(), name)
    for low, name in names.items():
        if low not in _NOT_UPDATED:
            headers.popall(name, None)
            for value in fresh.header_list(name):
                headers.add(name, value)
    return cached.replace(headers=headers)
