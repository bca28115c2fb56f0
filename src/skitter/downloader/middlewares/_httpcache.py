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
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from multidict import CIMultiDict

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import IgnoreRequest, NotConfigured, TransportError
from skitter.extensions.httpcache import (
    CorruptEntry,
    build,
    policy_class,
    storage_class,
)
from skitter.http import Request, Response

__all__ = ["HttpCacheMiddleware"]

log = logging.getLogger("skitter.httpcache")

T = TypeVar("T")

#: Headers of a 304 that describe the 304 itself, not the stored body they would update.
_NOT_UPDATED = frozenset(
    ("content-length", "content-encoding", "transfer-encoding", "content-type", "connection")
)
#: Threads for the storage: enough to overlap a slow disk's latency, few enough to
#: stay out of the way of the event loop's own thread.
_THREADS = 8


class HttpCacheMiddleware:
    """Serves responses from HTTPCACHE_STORAGE as HTTPCACHE_POLICY allows."""

    def __init__(self, policy: Any, storage: Any, stats: StatsSink, ignore_missing: bool) -> None:
        self.policy = policy
        self.storage = storage
        self.stats = stats
        self.ignore_missing = ignore_missing
        self._executor: ThreadPoolExecutor | None = None
        self._spider: Any = None
        self._warned: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpCacheMiddleware:
        settings = crawler.settings
        if not settings["HTTPCACHE_ENABLED"]:
            raise NotConfigured
        policy = build(policy_class(settings["HTTPCACHE_POLICY"]), crawler)
        storage = build(storage_class(settings["HTTPCACHE_STORAGE"]), crawler)
        return cls(policy, storage, crawler.stats, bool(settings["HTTPCACHE_IGNORE_MISSING"]))

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

    async def process_request(self, request: Request, spider: Any) -> Response | None:
        meta = request.meta
        if meta.get("dont_cache"):
            return None
        if not self.policy.should_cache_request(request):
            meta["_dont_cache"] = True
            return None
        try:
            cached: Response | None = await self._run(
                self.storage.retrieve_response, spider, request
            )
        except CorruptEntry as exc:
            self.stats.inc("httpcache/corrupt")
            log.warning("corrupt cache entry for %r, downloading it again: %s", request, exc)
            cached = None
        except (OSError, sqlite3.Error) as exc:
            self.stats.inc("httpcache/retrieve_failed")
            self._failed("read", request, exc)
            cached = None
        if cached is None:
            self.stats.inc("httpcache/miss")
            if self.ignore_missing:
                self.stats.inc("httpcache/ignore")
                raise IgnoreRequest(f"not in the HTTP cache: {request!r}", request=request)
            return None
        cached.flags.append("cached")
        if self.policy.is_cached_response_fresh(cached, request):
            self.stats.inc("httpcache/hit")
            return cached
        meta["cached_response"] = cached
        return None

    async def process_response(self, request: Request, response: Response, spider: Any) -> Response:
        meta = request.meta
        if meta.get("dont_cache") or "cached" in response.flags:
            return response  # bypassed, or the entry process_request served
        if meta.pop("_dont_cache", False):
            return response
        cached: Response | None = meta.pop("cached_response", None)
        if cached is None:
            self.stats.inc("httpcache/firsthand")
            await self._store(spider, request, response)
            return response
        if self.policy.is_cached_response_valid(cached, response, request):
            self.stats.inc("httpcache/revalidate")
            if response.status == 304:
                cached = _refreshed(cached, response)
                await self._store(spider, request, cached)
            return cached
        self.stats.inc("httpcache/invalidate")
        await self._store(spider, request, response)
        return response

    def process_exception(
        self, request: Request, exception: Exception, spider: Any
    ) -> Response | None:
        cached: Response | None = request.meta.pop("cached_response", None)
        if cached is not None and isinstance(exception, TransportError):
            self.stats.inc("httpcache/errorrecovery")
            return cached
        return None

    def _failed(self, what: str, request: Request, exc: BaseException) -> None:
        """A warning for the first failure of each kind, then debug lines (the stats
        count every one): a broken cache directory would otherwise log every request."""
        level = logging.DEBUG if what in self._warned else logging.WARNING
        self._warned.add(what)
        log.log(level, "cannot %s %r in the HTTP cache: %s", what, request, exc)

    async def _store(self, spider: Any, request: Request, response: Response) -> None:
        """Store ``response`` if the policy allows. A write that fails (a full disk, a
        locked database) is logged and counted, and the response goes on: the page was
        downloaded, and losing it for want of a cache entry would fail the task."""
        if not self.policy.should_cache_response(response, request):
            self.stats.inc("httpcache/uncacheable")
            return
        try:
            await self._run(self.storage.store_response, spider, request, response)
        except (OSError, sqlite3.Error) as exc:
            self.stats.inc("httpcache/store_failed")
            self._failed("store", request, exc)
            return
        self.stats.inc("httpcache/store")


def _refreshed(cached: Response, fresh: Response) -> Response:
    """The stored response with the end-to-end headers of the 304 that confirmed it."""
    headers = CIMultiDict(cached.headers)
    names: dict[str, str] = {}
    for name in fresh.headers:
        names.setdefault(name.lower(), name)
    for low, name in names.items():
        if low not in _NOT_UPDATED:
            headers.popall(name, None)
            for value in fresh.headers.getall(name):
                headers.add(name, value)
    return cached.replace(headers=headers)
