"""``MediaPipeline``: Scrapy's media pipeline API, on two ways of downloading.

In a crawl, the pipeline manager does not call ``process_item``: every media request is
a task of the crawl (queued, leased, polite, retried, in scope), and the item travels
with its requests (``_media_chain``). Called directly, as Scrapy's tests and users' unit
tests do, ``process_item(item)`` downloads as Scrapy does, through the crawler's engine
(``crawler.engine.download_async``), and caches each result by request fingerprint in
``spiderinfo`` so that a URL named by many items is fetched once.

Both ways call the same hooks, as Scrapy does: ``get_media_requests``,
``media_to_download`` (a result without downloading: a stored file still fresh),
``media_downloaded`` / ``media_failed`` and ``item_completed``. The results an item gets
are Scrapy's: a list of ``(True, result)`` or ``(False, Failure)`` in request order.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any, ClassVar

from skitter._failure import Failure
from skitter.exceptions import ScrapyDeprecationWarning
from skitter.http import Request, Response
from skitter.http.request import NO_CALLBACK
from skitter.pipelines._media_chain import (
    MEDIA_META,
    FileException,
    MediaChain,
    MediaPending,
    _MediaRequestFiltered,
)
from skitter.settings.wiring import PER_CLASS
from skitter.utils.defer import ensure_awaitable
from skitter.utils.misc import arg_to_iter

__all__ = [
    "MEDIA_META",
    "FileException",
    "FileInfo",
    "FileInfoOrError",
    "MediaPending",
    "MediaPipeline",
]

log = logging.getLogger("skitter.pipelines.media")

#: A stored file's result: ``{"url", "path", "checksum", "status"}``.
FileInfo = dict[str, Any]
#: One entry of the results ``item_completed`` gets.
FileInfoOrError = tuple[bool, Any]

#: The statuses a media download hands to the pipeline when redirects are followed:
#: every one but the redirects, which the downloader follows.
_NOT_REDIRECTS = tuple(status for status in range(100, 600) if not 300 <= status < 400)


def _is_failure(value: Any) -> bool:
    """A Failure, skitter's or Twisted's (told apart by behaviour, not by import)."""
    return isinstance(getattr(value, "value", None), BaseException) and callable(
        getattr(value, "check", None)
    )


def failure_exc_info(failure: Any) -> tuple[Any, Any, Any]:
    """``(type, value, traceback)`` of a Failure, for a log record's ``exc_info``."""
    get_tb = getattr(failure, "getTracebackObject", None)
    tb = get_tb() if callable(get_tb) else failure.value.__traceback__
    return type(failure.value), failure.value, tb


class MediaPipeline(MediaChain):
    """The base of ``FilesPipeline`` and ``ImagesPipeline``: subclasses say what to
    download (``get_media_requests``) and what to do with it (``media_downloaded``).

    Each setting it reads may be given for one subclass alone, prefixed with the class
    name in upper case (``MYPIPELINE_MEDIA_ALLOW_REDIRECTS``), as in Scrapy.
    """

    #: Whether ``item_completed`` logs each failed result (with its traceback).
    LOG_FAILED_RESULTS: ClassVar[bool] = True
    #: The settings a subclass reads under its own name (set for each subclass).
    declared_settings: ClassVar[list[str]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass reads the media settings under its own name too: declared, so
        that a crawl with it does not call them unknown."""
        super().__init_subclass__(**kwargs)
        cls.declared_settings = [f"{cls.__name__.upper()}_{key}" for key in PER_CLASS]

    class SpiderInfo:
        """What the hooks get as ``info``: the spider, and the fingerprints of requests
        being downloaded, waiting for one, and done (their results)."""

        def __init__(self, spider: Any) -> None:
            self.spider = spider
            self.downloading: set[bytes] = set()
            self.downloaded: dict[bytes, Any] = {}
            self.waiting: defaultdict[bytes, list[asyncio.Future[Any]]] = defaultdict(list)

    def __init__(
        self, download_func: Callable[..., Any] | None = None, *, crawler: Any = None
    ) -> None:
        if crawler is None:
            raise TypeError(f"{type(self).__name__} needs a crawler: build it with from_crawler")
        super().__init__()
        self.crawler = crawler
        self.download_func = download_func
        self._fingerprinter = crawler.request_fingerprinter
        self.spiderinfo: MediaPipeline.SpiderInfo = self.SpiderInfo(crawler.spider)
        key = self._key_for_pipe("MEDIA_ALLOW_REDIRECTS", "MediaPipeline", crawler.settings)
        self.allow_redirects: bool = crawler.settings.getbool(key, False)
        self.handle_httpstatus_list = list(_NOT_REDIRECTS) if self.allow_redirects else None

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        return cls(crawler=crawler)

    def _key_for_pipe(
        self, key: str, base_class_name: str | None = None, settings: Any = None
    ) -> str:
        """``key``, or ``<CLASSNAME>_<key>`` for a subclass: the name only that subclass
        reads, when it is set (or when no settings are given to check)."""
        class_name = type(self).__name__
        own_key = f"{class_name.upper()}_{key}"
        if not base_class_name or class_name == base_class_name:
            return key
        if settings is not None and settings.get(own_key) is None:
            return key
        return own_key

    # -- lifecycle -------------------------------------------------------------------
    def open_spider(self, spider: Any = None) -> None:
        self.spiderinfo = self.SpiderInfo(spider if spider is not None else self.crawler.spider)
        self._open_store()

    def _open_store(self) -> None:
        """Nothing to open here; the files pipeline opens its store."""

    # -- Scrapy's hooks --------------------------------------------------------------
    def get_media_requests(self, item: Any, info: SpiderInfo) -> Any:
        """The requests of ``item``'s media (one, several or none)."""
        return []

    def media_to_download(self, request: Request, info: SpiderInfo, *, item: Any = None) -> Any:
        """A result for ``request`` without downloading it (or an awaitable of one), or
        None to download it."""
        return None

    def media_downloaded(
        self, response: Response, request: Request, info: SpiderInfo, *, item: Any = None
    ) -> Any:
        """The result of a downloaded media file (may be awaitable); raise to fail it."""
        return response

    def media_failed(self, failure: Any, request: Request, info: SpiderInfo) -> Any:
        """A download failed: raise (the result is the failure) or return a result."""
        failure.raiseException()

    def file_path(
        self,
        request: Request,
        response: Response | None = None,
        info: SpiderInfo | None = None,
        *,
        item: Any = None,
    ) -> str:
        raise NotImplementedError

    def item_completed(self, results: list[FileInfoOrError], item: Any, info: SpiderInfo) -> Any:
        """The item, once every media request has a result; failures are logged (not
        those of requests the crawl filtered) unless LOG_FAILED_RESULTS is off."""
        if self.LOG_FAILED_RESULTS:
            for ok, value in results:
                if ok or not _is_failure(value) or value.check(_MediaRequestFiltered):
                    continue
                log.error(
                    "%s found errors processing %s",
                    type(self).__name__,
                    item,
                    exc_info=failure_exc_info(value),
                    extra={"spider": info.spider},
                )
        return item

    # -- Scrapy's way: downloads through the crawler's engine ------------------------
    async def process_item(self, item: Any, spider: Any = None) -> Any:
        info = self.spiderinfo
        requests = arg_to_iter(self.get_media_requests(item, info))
        outcomes = await asyncio.gather(*(self._process_request(r, info, item) for r in requests))
        return await ensure_awaitable(self.item_completed(list(outcomes), item, info))

    async def _process_request(self, request: Request, info: SpiderInfo, item: Any) -> Any:
        """``(ok, value)`` for one request: the cached outcome of its fingerprint, the
        outcome of a download already running for it, or its own; then its errback."""
        fp = self._fingerprinter.fingerprint(request)
        errback = request.errback
        request.callback = NO_CALLBACK
        request.errback = None
        if fp in info.downloaded:
            outcome = info.downloaded[fp]
        else:
            waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            info.waiting[fp].append(waiter)
            if fp not in info.downloading:
                info.downloading.add(fp)
                result = await self._outcome(request, info, item)
                self._cache_result_and_execute_waiters(result, fp, info)
            outcome = await waiter
        if _is_failure(outcome) and errback is not None:
            outcome = errback(outcome)
        return (False, outcome) if _is_failure(outcome) else (True, outcome)

    async def _outcome(self, request: Request, info: SpiderInfo, item: Any) -> Any:
        """The result of ``request`` (a value, or a Failure)."""
        try:
            known = await ensure_awaitable(self.media_to_download(request, info, item=item))
            if known is not None:
                return known
            self._modify_media_request(request)
            try:
                response = await self._download(request)
            except Exception as exc:
                return self._failed(Failure(exc, request), request, info)
            return await ensure_awaitable(self.media_downloaded(response, request, info, item=item))
        except Exception as exc:
            return Failure(exc, request)

    async def _download(self, request: Request) -> Response:
        if self.download_func is not None:
            response: Response = await ensure_awaitable(self.download_func(request))
            return response
        engine = getattr(self.crawler, "engine", None)
        download = getattr(engine, "download_async", None)
        if download is None:
            raise RuntimeError(
                f"{type(self).__name__}.process_item() downloads through the crawler's "
                "engine, and this crawler has none: in a crawl, skitter's pipeline "
                "manager runs the media requests as tasks instead"
            )
        response = await download(request)
        return response

    def _failed(self, failure: Any, request: Request, info: SpiderInfo) -> Any:
        """``media_failed``'s answer: what it returns, or the failure it raised."""
        try:
            result = self.media_failed(failure, request, info)
        except Exception as exc:
            return Failure(exc, request)
        if _is_failure(result):
            warnings.warn(
                f"{type(self).__name__}.media_failed returned a Failure instance; "
                "raise the exception instead",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
        return result

    def _modify_media_request(self, request: Request) -> None:
        """Let every status through to the pipeline (all of them, or all but the
        redirects when MEDIA_ALLOW_REDIRECTS lets the downloader follow those)."""
        if self.handle_httpstatus_list is not None:
            request.meta["handle_httpstatus_list"] = self.handle_httpstatus_list
        else:
            request.meta["handle_httpstatus_all"] = True

    def _cache_result_and_execute_waiters(self, result: Any, fp: bytes, info: SpiderInfo) -> None:
        """Keep ``result`` for the fingerprint and give it to every request waiting."""
        if _is_failure(result):
            value = result.value
            # The exception must not keep alive what was handling it (a response).
            if isinstance(value.__context__, StopIteration):
                value.__context__ = None
        info.downloading.discard(fp)
        info.downloaded[fp] = result
        for waiter in info.waiting.pop(fp, []):
            if not waiter.done():
                waiter.set_result(result)
