"""The scraper: runs a spider's callbacks and errbacks, and routes what they yield.

Requests go to the scheduler in batches (one push per callback, or per 256 requests of a
long one), items to the pipelines one by one, or up to CONCURRENT_ITEMS at once when a
pipeline awaits (``_items``; the pipelines' back-pressure holds: the callback's output is
taken no faster than its items get through), and anything else is reported with the
callback's name and counted: the crawl goes on. A frontier that cannot be reached and a
``FatalError`` (a feed that cannot be written) are the errors passed up: the task's
children or items could not be stored, so the task must not be acknowledged.

A media request (``meta[MEDIA_META]``, made by the files and images pipelines) is not
the spider's: its response or error goes to ``media_done``, which hands it to the
pipelines, and then queues the item's next media request or counts the item that came
out.

An errback gets a ``Failure`` wrapping the exception, as Scrapy's errbacks get Twisted's
(``skitter._failure``); a callback's unhandled exception is sent as spider_error.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterable, Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from skitter._failure import Failure
from skitter.engine._items import ItemWindow
from skitter.engine._outcome import failure_reason
from skitter.engine._project import Project
from skitter.engine._starts import START_META, start_accepted, start_ended
from skitter.exceptions import (
    CloseSpider,
    FatalError,
    FrontierUnavailable,
    HttpError,
    IgnoreRequest,
)
from skitter.http import Request, Response
from skitter.items import is_item
from skitter.pipelines import MEDIA_META, MediaPending
from skitter.signals import spider_error

__all__ = ["TASKID", "Scraper"]

log = logging.getLogger("skitter.engine")

_FLUSH_AT = 256  # requests yielded by one callback are queued in batches of this size
#: The taskid of the task whose callback runs, set by the task runner only when a sink
#: needs items' origins (``<taskid>/<place in the output>``: see ``pipelines._sinks``).
TASKID: ContextVar[str] = ContextVar("skitter_taskid", default="")


class Scraper:
    """Callbacks in, requests and items out. One per engine; stateless between calls."""

    def __init__(
        self,
        enqueue: Callable[[Project, list[Request]], Awaitable[None]],
        check_limits: Callable[[Project], None],
    ) -> None:
        self._enqueue = enqueue
        self._check_limits = check_limits

    async def handle_response(self, project: Project, response: Response) -> int:
        """Run the response through the spider; returns how many items it yielded."""
        request = response.request
        assert request is not None  # the downloader ties every response to its request
        meta = request.meta
        if meta and MEDIA_META in meta:
            return await self.media_done(project, request, response=response)
        try:
            await project.spider_mw.process_input(response)
        except Exception as exc:
            if isinstance(exc, HttpError):
                if "unchanged" in response.flags:
                    return 0  # a recrawl's 304: the page did not change, nothing failed
                log.info("Ignoring response %s: HTTP status code is not handled", response)
            if meta and meta.get(START_META):
                await start_ended(project, request, _refusal(response, exc))
            return await self.errback(project, request, exc, response)
        if meta and meta.get(START_META):
            await start_accepted(project)
        callback = request.callback or project.spider.parse
        return await self.run_callback(project, response, callback, response, **request.cb_kwargs)

    async def errback(
        self,
        project: Project,
        request: Request,
        exc: BaseException,
        response: Response | None = None,
    ) -> int:
        if request.meta and MEDIA_META in request.meta:
            return await self.media_done(project, request, error=exc)
        if request.errback is None:
            if not isinstance(exc, HttpError | IgnoreRequest):
                _count_failed(project, exc)
            return 0
        if getattr(exc, "request", None) is None:
            with contextlib.suppress(AttributeError):
                exc.request = request  # type: ignore[attr-defined]
        if response is None:
            response = getattr(exc, "response", None) or Response(
                request.url, status=0, request=request, flags=["failed"]
            )
        return await self.run_callback(project, response, request.errback, Failure(exc, request))

    async def media_done(
        self,
        project: Project,
        request: Request,
        response: Response | None = None,
        error: BaseException | None = None,
    ) -> int:
        """A media task ended: its pipeline queues the item's next media request, or the
        item goes on through the pipelines after it (no spider middleware: the spider
        did not ask for this response). 1 if an item came out."""
        try:
            result = await project.pipelines.media_done(request, project.spider, response, error)
        except CloseSpider as exc:
            project.request_close(exc.reason)
            return 0
        if result.__class__ is MediaPending:
            await self._enqueue(project, result.requests)
            return 0
        if project.limits:
            self._check_limits(project)
        return 0 if result is None else 1

    async def run_callback(
        self,
        project: Project,
        response: Response,
        callback: Callable[..., Any],
        *args: Any,
        **kwargs: Any,
    ) -> int:
        batch: list[Request] = []
        items = 0
        try:
            output = project.spider_mw.process_result(response, callback(*args, **kwargs))
            items = await self._consume(project, callback, output, batch, response)
        except CloseSpider as exc:
            project.request_close(exc.reason)
        except (FrontierUnavailable, FatalError):
            raise  # the children or items could not be stored: the task must not be acked
        except Exception as exc:
            alternative = await project.spider_mw.process_exception(response, exc)
            if alternative is None:
                if project.pipelines.formatted is None:  # else LOG_FORMATTER's line
                    name = getattr(callback, "__qualname__", repr(callback))
                    log.error(
                        "Spider error processing %s (callback %s)",
                        response.request,
                        name,
                        exc_info=exc,
                    )
                project.stats.inc(f"spider_exceptions/{type(exc).__name__}")
                project.stats.inc("spider_exceptions/count")
                if spider_error in project.signals.live:
                    await project.signals.send_catch_log_async(
                        spider_error,
                        failure=Failure(exc, response.request),
                        response=response,
                        spider=project.spider,
                    )
                self._check_limits(project)
            else:
                items += await self._consume(
                    project, callback, alternative, batch, response, first=items
                )
        finally:
            if batch:
                await self._enqueue(project, batch)
        return items

    async def _consume(
        self,
        project: Project,
        callback: Callable[..., Any],
        output: AsyncIterable[Any],
        batch: list[Request],
        response: Response | None,
        first: int = 0,
    ) -> int:
        """Route a callback's output; returns how many items it held. Items go through
        the pipelines one at a time, or up to CONCURRENT_ITEMS at once when a pipeline
        awaits (``_items``); all are through when this returns or raises. ``first`` is
        the place of the first item in the task's output (after the callback's own when
        this is a spider middleware's replacement for it)."""
        window = None
        if project.concurrent_items > 1 and project.pipelines.awaits:
            window = ItemWindow(project.concurrent_items)
        items = 0
        taskid = TASKID.get() if project.pipelines.sinks else None
        try:
            async for obj in output:
                if isinstance(obj, Request):
                    batch.append(obj)
                    if len(batch) >= _FLUSH_AT:
                        await self._enqueue(project, batch[:])
                        batch.clear()
                elif obj is None:
                    continue
                elif is_item(obj):
                    origin = None if taskid is None else f"{taskid}/{first + items}"
                    items += 1
                    if window is None:
                        await self._item(project, obj, batch, response, origin)
                    else:
                        await window.start(self._item(project, obj, batch, response, origin))
                else:
                    self.count_bad_output(project, obj, getattr(callback, "__qualname__", "?"))
        except Exception:
            if window is not None:
                await window.finish()  # an item's error is the one to raise
            raise
        except BaseException:  # cancelled: so are the items it started
            if window is not None:
                await window.cancel()
            raise
        if window is not None:
            await window.finish()
        return items

    async def _item(
        self,
        project: Project,
        item: Any,
        batch: list[Request],
        response: Response | None,
        origin: str | None,
    ) -> None:
        result = await project.pipelines.process_item(item, project.spider, response, origin)
        if result.__class__ is MediaPending:
            batch.extend(result.requests)  # queued before the task is acked
        if project.limits:
            self._check_limits(project)

    def count_bad_output(self, project: Project, obj: object, where: str) -> None:
        project.stats.inc(f"spider_exceptions/CallbackError/{type(obj).__name__}")
        log.error(
            "%s yielded a %s (%.80r); expected a Request, an item (dict, dataclass, attrs, "
            "pydantic) or None",
            where,
            type(obj).__name__,
            obj,
        )


def _count_failed(project: Project, exc: BaseException) -> None:
    """A request failed for good and no errback took it: counted by the error's class
    and, when known, by its cause under that (``.../ConnectError/Connection refused``)."""
    key = f"engine/failed_requests/{type(exc).__name__}"
    project.stats.inc(key)
    cause = getattr(exc, "cause", None)
    if isinstance(cause, str):
        project.stats.inc(f"{key}/{cause}")


def _refusal(response: Response, exc: BaseException) -> str:
    """Why the spider did not take a response (a start request's, for the record)."""
    if isinstance(exc, HttpError):
        return f"HTTP {response.status}: a status the spider does not handle"
    return failure_reason(exc)
