"""How a media pipeline's downloads run in a crawl: each a task, the item carried.

Scrapy's media pipeline downloads beside the scheduler. Here every media request is a
task like any other: it is queued in the frontier, leased, gated by the project's and
the slot's politeness, retried, bounded by DOWNLOAD_MAXSIZE and refused out of scope by
the downloader. So a crash or a stop loses nothing, and the item must outlive the task
that yielded it. It does so by travelling in a chain:

1. ``begin`` (the pipeline's turn in the chain of pipelines) asks ``get_media_requests``
   for the item's requests and ``media_to_download`` for each: a file stored less than
   FILES_EXPIRES days ago is ``uptodate`` and not fetched. If nothing is left to
   download, the item goes on at once. Otherwise the first request to fetch is returned
   in a ``MediaPending``: the engine queues it with the other requests of the callback,
   before the callback's task is acknowledged, and the item leaves the pipelines for now.
2. The request carries, in ``meta[MEDIA_META]``, the item (as plain data), the requests
   still to fetch and the results so far. When its task ends (a response, or an error:
   offsite, too large, out of retries...), the engine hands it to ``finish``, which
   calls ``media_downloaded`` (or ``media_failed``), records the result and returns the
   next request, again in a ``MediaPending``; after the last, the item with its results
   (``item_completed``) continues with the pipelines after this one.

Each link is acknowledged only after the next one is queued (or the item has gone
through the remaining pipelines and feeds), so a resumed job finishes every item once.
A link's taskid is derived from the item, its origin and its place in the chain, so a
callback that runs again after a crash queues the same tasks instead of twins.

An item's files are fetched one after another; many items' files download in parallel.
The item must be plain data (str, numbers, bool, None, bytes, lists, dicts), since it
is stored with its request: anything else is refused when the request is made, naming
the field. It comes back as its class when that class is found (one seen in this
process, an ``Item`` subclass, or a name in the spider's module); otherwise as a dict.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections import OrderedDict
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import msgspec

from skitter._failure import Failure
from skitter.exceptions import CodecError, FatalError
from skitter.http import Request, Response
from skitter.http.wiring import decode_request, encode_request
from skitter.items import adapter_class, item_to_dict
from skitter.utils.defer import ensure_awaitable
from skitter.utils.misc import arg_to_iter

__all__ = ["MEDIA_META", "FileException", "MediaChain", "MediaPending"]

log = logging.getLogger("skitter.pipelines.media")

#: The meta key under which a media request carries its item and chain.
MEDIA_META = "_skitter_media"
#: Added to a media request's priority: an item's files come before more pages, so
#: items are finished rather than piled up.
MEDIA_PRIORITY = 1000
_RECENT = 10_000  # downloaded results remembered for ``cached``: bounded memory


class FileException(Exception):
    """A media file that could not be had (bad status, empty body, unreadable image)."""


class _MediaRequestFiltered(FileException):
    """A media request the crawl refused (offsite, robots.txt): not a download error, so
    it is logged at DEBUG level and not as a failure of the item."""


@dataclass(frozen=True, slots=True)
class MediaPending:
    """The item waits for its media: the engine queues ``requests`` with the other
    requests of the task, and the item goes on when the last of them has ended."""

    requests: list[Request]


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class MediaChain:
    """The crawl's side of a media pipeline: ``begin`` and ``finish``, called by the
    pipeline manager. The hooks it calls are ``MediaPipeline``'s."""

    # Provided by MediaPipeline: the hooks and what they need.
    spiderinfo: Any
    allow_redirects: bool
    get_media_requests: Any
    media_to_download: Any
    media_downloaded: Any
    item_completed: Any
    _failed: Any

    def __init__(self) -> None:
        #: Results of the files this process downloaded last, by URL: another item
        #: naming the same URL gets it as ``cached`` instead of fetching it again.
        self._downloaded: OrderedDict[str, Any] = OrderedDict()
        #: Item classes seen, by name, to give a carried item its class back.
        self._classes: dict[str, type] = {}

    def _info(self, spider: Any) -> Any:
        if self.spiderinfo.spider is None:
            self.spiderinfo.spider = spider
        return self.spiderinfo

    async def begin(self, item: Any, spider: Any, *, stage: int, origin: str) -> Any:
        """This pipeline's turn for ``item``: the item (nothing to fetch) or a
        ``MediaPending`` with the first request to fetch."""
        info = self._info(spider)
        requests = list(arg_to_iter(self.get_media_requests(item, info)))
        if not requests:
            return await ensure_awaitable(self.item_completed([], item, info))
        self._classes.setdefault(_class_name(type(item)), type(item))
        state: dict[str, Any] = {
            "pipeline": _class_name(type(self)),
            "stage": stage,
            "origin": origin,
            "item": item_to_dict(item),
            "cls": None if type(item) is dict else _class_name(type(item)),
            "pending": [self._stored(request, spider) for request in requests],
            "results": [],
        }
        return await self._advance(state, item, spider)

    async def finish(
        self,
        request: Request,
        spider: Any,
        response: Response | None,
        error: BaseException | None,
    ) -> Any:
        """The end of a media task: the next ``MediaPending``, or the item completed."""
        state = dict(request.meta[MEDIA_META])
        item = self._rebuild(state, spider)
        info = self._info(spider)
        current = decode_request(state["current"], spider)
        if error is not None:
            outcome = self._failed(Failure(error, current), current, info)
        else:
            try:
                outcome = await ensure_awaitable(
                    self.media_downloaded(response, current, info, item=item)
                )
            except FatalError:
                raise  # the store failed: the task runs again on a resume
            except Exception as exc:
                outcome = Failure(exc, current)
        if isinstance(getattr(outcome, "value", None), BaseException):
            state["results"] = [*state["results"], [False, str(outcome.value)]]
            self._count("failed")
        else:
            self._downloaded[current.url] = outcome
            if len(self._downloaded) > _RECENT:
                self._downloaded.popitem(last=False)
            state["results"] = [*state["results"], [True, outcome]]
        return await self._advance(state, item, spider)

    async def _advance(self, state: dict[str, Any], item: Any, spider: Any) -> Any:
        info = self._info(spider)
        pending: list[bytes] = list(state["pending"])
        results: list[list[Any]] = list(state["results"])
        while pending:
            current = pending.pop(0)
            request = decode_request(current, spider)
            known = self._downloaded.get(request.url)
            if isinstance(known, dict):
                results.append([True, {**known, "status": "cached"}])
                self._count("cached")
                continue
            fresh = await ensure_awaitable(self.media_to_download(request, info, item=item))
            if fresh is not None:
                results.append([True, fresh])
                continue
            chain = {**state, "pending": pending, "results": results, "current": current}
            return MediaPending([self._media_request(request, chain, spider)])
        outcomes = [_result(ok, value) for ok, value in results]
        return await ensure_awaitable(self.item_completed(outcomes, item, info))

    def _media_request(self, request: Request, chain: dict[str, Any], spider: Any) -> Request:
        meta = {**request.meta, MEDIA_META: chain}
        if not self.allow_redirects:
            meta.setdefault("dont_redirect", True)
        media = request.replace(
            meta=meta, priority=request.priority + MEDIA_PRIORITY, dont_filter=False
        )
        self._stored(media, spider)
        identity = [chain["origin"], chain["pipeline"], len(chain["results"]), request.url,
                    chain["item"]]  # fmt: skip
        digest = hashlib.sha1(msgspec.msgpack.encode(identity), usedforsecurity=False)
        return media.replace(taskid=f"media-{digest.hexdigest()}")

    def _stored(self, request: Request, spider: Any) -> bytes:
        """``request`` as the frontier stores it (the wire codec: no secret headers or
        proxy credentials, plain data only), or TypeError saying why it cannot be."""
        try:
            return encode_request(request, spider)
        except CodecError as exc:
            raise TypeError(
                f"{type(self).__name__} stores the item with its media requests, so both "
                f"must be plain data (str, numbers, bool, None, bytes, lists, dicts): {exc}"
            ) from None

    def _count(self, status: str) -> None:
        inc_stats = getattr(self, "inc_stats", None)
        if inc_stats is not None:
            inc_stats(status)

    # -- the carried item ------------------------------------------------------------
    def _rebuild(self, state: dict[str, Any], spider: Any) -> Any:
        data: dict[str, Any] = dict(state["item"])
        name = state["cls"]
        if name is None:
            return data
        cls = self._classes.get(name) or _find_class(name, spider)
        if cls is None:
            log.warning("Item class %s not found; the item goes on as a dict", name)
            return data
        try:
            factory: Any = cls
            if issubclass(cls, MutableMapping):
                return factory(data)
            return factory(**data)
        except Exception as exc:
            log.warning("Cannot rebuild a %s item (%s); it goes on as a dict", name, exc)
            return data


def _result(ok: bool, value: Any) -> tuple[bool, Any]:
    if ok:
        return True, value
    return False, Failure(FileException(value))


def _find_class(name: str, spider: Any) -> type | None:
    """An item class by its ``module.qualname``: an ``Item`` subclass, or an item class
    the spider's module names. Never imported by name, and never any other class: a
    stored payload must not choose code to run."""
    from skitter.item import Item  # itemadapter, and Scrapy where installed: on first use

    stack: list[type] = [Item]
    while stack:
        cls = stack.pop()
        if _class_name(cls) == name:
            return cls
        stack.extend(cls.__subclasses__())
    module = sys.modules.get(type(spider).__module__)
    for candidate in vars(module).values() if module is not None else ():
        if (
            isinstance(candidate, type)
            and _class_name(candidate) == name
            and adapter_class().is_item_class(candidate)
        ):
            return candidate
    return None
