"""The item pipeline: every item passes the user's pipelines in order, then the feeds,
then the sinks (databases and brokers: ``_sinks``).

A pipeline is any object with some of Scrapy's methods, each sync or async::

    open_spider(spider)          once, before the first item
    process_item(item, spider)   -> the item (possibly changed or replaced), or raise DropItem
    close_spider(spider)         once, at the end, also after a failure or Ctrl-C

Outcomes of ``process_item`` and what they cost the crawl:

- an item back: it goes on to the next pipeline; after the last, ``item_scraped_count``.
- ``DropItem``: the item stops here, ``item_dropped_count`` and
  ``item_dropped_reasons_count/<exception class>``, one WARNING "Dropped: <reason>".
- ``CloseSpider``: passed on to the engine, which ends the crawl gracefully.
- a ``FatalError`` (a feed or other store that cannot take the item): passed on; the
  engine fails the crawl without acknowledging the item's task.
- any other exception: a bug in that pipeline, not in the crawl. The item stops, the error
  is logged with the pipeline's name and the item, ``item_error_count`` and
  ``pipeline/errors/<PipelineClass>`` count it (``log_count/ERROR`` is left to the log
  handler that counts every log line, so it is not counted twice), and the crawl goes on.
- None: Scrapy forbids it; it is nearly always a forgotten ``return item``, so the item
  the pipeline received goes on, with one warning per pipeline.

A feed that cannot be written (disk full, I/O error) raises ``StorageError`` from then
on. Once one has, every item is refused at once, before any pipeline sees it: its task
is not acknowledged, so it runs again on a resume, and the user's pipelines do not
handle items the feeds will not hold. ``item_scraped_count`` counts only items that
reached the files: the items a feed had buffered when it failed are taken back out of
it (and counted as ``feedexport/lost_items``). A user pipeline that stores items the same
way (it has ``failure`` and ``lost_items``, as ``RedisPipeline``) is treated alike, and
its ``async flush()`` is awaited with the feeds' before a worker acknowledges a task.
Sinks are stores too; every item that got through reaches them with its origin, and
their ``flush()`` (a commit) comes before every task's ack.

Whether ``process_item`` is a coroutine function is settled once, when the manager is
built, so a sync pipeline costs one plain call per item.

Item validation (``_validation``) is a pipeline before the feeds (its feed of invalid
items is opened and closed with them); field coverage (``_coverage``) a last step, added
when the monitors ask (``count_coverage``). A crawl without them pays nothing for them.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from types import CoroutineType
from typing import Any

from skitter._components import build_components
from skitter._failure import Failure
from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import CloseSpider, DropItem, FatalError, StorageError
from skitter.logformatter import FormattedLog
from skitter.pipelines._base import ItemHook, ItemPipeline, SpiderHook
from skitter.pipelines._coverage import FieldCoverage
from skitter.pipelines._feeds import FeedExporter, build_feeds
from skitter.pipelines._media import MEDIA_META, MediaPending, MediaPipeline
from skitter.pipelines._sinks import Sink, build_sinks
from skitter.pipelines._validation import InvalidItem, validation_pipelines
from skitter.settings import ItemSettings
from skitter.signals import (
    SignalManager,
    feed_exporter_closed,
    feed_slot_closed,
    item_dropped,
    item_error,
    item_scraped,
)

__all__ = ["ItemPipelineManager"]

Logger = logging.Logger | logging.LoggerAdapter[logging.Logger]
#: (name, process_item, is async, the MediaPipeline whose turn it is, or None)
_Step = tuple[str, ItemHook, bool, MediaPipeline | None]


def _name(pipeline: ItemPipeline) -> str:
    return type(pipeline).__name__


def _summary(item: Any) -> str:
    return f"{item!r:.300}"


def _media_turn(item: Any, spider: Any) -> Any:
    """A media pipeline's step is run by ``_run`` through the pipeline itself."""
    raise AssertionError("a media pipeline's step is never called directly")


async def _call(method: SpiderHook, spider: Any) -> None:
    result = method(spider)
    if inspect.isawaitable(result):
        await result


class ItemPipelineManager:
    """Runs items through ``pipelines`` (user pipelines, then feed exporters)."""

    def __init__(
        self,
        pipelines: Sequence[ItemPipeline],
        *,
        feeds: Sequence[FeedExporter] = (),
        sinks: Sequence[Sink] = (),
        stats: StatsSink,
        logger: Logger | None = None,
        signals: SignalManager | None = None,
        invalid_feeds: Sequence[FeedExporter] = (),
    ) -> None:
        #: Every pipeline in the order items see them: the feed exporters, then the
        #: sinks, are last (then the feeds of invalid items, which the validation writes).
        self.pipelines: list[ItemPipeline] = [*pipelines, *feeds, *sinks]
        self._user = list(pipelines)
        feeds = [*feeds, *invalid_feeds]
        self._feeds = list(feeds)
        #: The databases and brokers of SINKS: they take every item that got through,
        #: with its origin (``process_item``), and ``flush`` commits them.
        self.sinks = list(sinks)
        #: Feeds and the pipelines that store items like them (``RedisPipeline``): they
        #: say why they broke (``failure``) and how many items they lost (``lost_items``).
        self._stores: list[Any] = [
            *feeds,
            *(p for p in pipelines if hasattr(p, "failure") and hasattr(p, "lost_items")),
            *sinks,
        ]
        #: The stores that buffer asynchronously: ``await flush()`` before an ack.
        self._async_flushes = [
            p.flush for p in self._stores if inspect.iscoroutinefunction(getattr(p, "flush", None))
        ]
        self._stats = stats
        #: item_scraped, item_dropped and item_error go here (the crawler's signals).
        self._signals = signals if signals is not None else SignalManager()
        self._log: Logger = logger or logging.getLogger("skitter.pipelines")
        #: LOG_FORMATTER at work (None: skitter's own lines): its dropped and item_error
        #: lines replace these, and the engine asks it for download errors.
        self.formatted: FormattedLog | None = None
        self._steps: list[_Step] = []
        for pipeline in self.pipelines:
            method = getattr(pipeline, "process_item", None)
            if isinstance(pipeline, MediaPipeline):
                self._steps.append((_name(pipeline), _media_turn, True, pipeline))
            elif callable(method):
                is_async = inspect.iscoroutinefunction(method)
                self._steps.append((_name(pipeline), method, is_async, None))
        #: Whether an item may wait in a pipeline (an async or media one): only then do
        #: items of one response share the pipelines (CONCURRENT_ITEMS).
        self.awaits = any(is_async for _name, _method, is_async, _media in self._steps)
        self.pipelines += invalid_feeds
        self._opened: list[ItemPipeline] = []
        self._returned_none: set[str] = set()
        #: Why a feed cannot be written (None while all can): every item is refused.
        self._feed_failure: str | None = None
        #: Items taken back out of item_scraped_count because a feed lost them.
        self._uncounted = 0

    @property
    def feeds(self) -> list[FeedExporter]:
        """The feed exporters, last in the chain (and the feeds of invalid items)."""
        return self._feeds

    def count_coverage(self) -> None:
        """Count every scraped item's field coverage (``_coverage``): a last step."""
        if not any(name == "FieldCoverage" for name, *_ in self._steps):
            self._steps.append(("FieldCoverage", FieldCoverage(self._stats).add, False, None))

    def flush_feeds(self) -> None:
        """Hand every feed's buffered items to the operating system (they survive the
        process being killed from then on); StorageError if a feed cannot take them."""
        try:
            for feed in self._feeds:
                feed.flush()
        except FatalError:
            self._check_feeds()
            raise

    async def flush(self) -> None:
        """What a worker awaits before acknowledging a task: the feeds' buffers handed to
        the operating system, and the items of the stores that send them (Redis) sent.
        StorageError if one cannot take them."""
        self.flush_feeds()
        try:
            for flush in self._async_flushes:
                await flush()
        except FatalError:
            self._check_feeds()
            raise

    def feed_positions(self) -> dict[str, int]:
        """Each file feed's size once flushed, by ``feed.key``: what a job checkpoint
        records. StorageError if a feed is broken: no checkpoint may record the tasks
        whose items it lost."""
        positions: dict[str, int] = {}
        try:
            for feed in self._feeds:
                position = feed.position()
                if position is not None:
                    positions[feed.key] = position
        except FatalError:
            self._check_feeds()
            raise
        return positions

    def feed_batches(self) -> dict[str, dict[str, object]]:
        """The batch each batched or staged feed is writing, by ``feed.key``: what a job
        checkpoint records beside ``feed_positions`` (call it right after)."""
        out: dict[str, dict[str, object]] = {}
        for feed in self._feeds:
            state = feed.batch_state()
            if state is not None:
                out[feed.key] = state
        return out

    def _check_feeds(self) -> None:
        """After a feed (or another store) raised: refuse items from now on, and take the
        items it lost back out of item_scraped_count (those of the store that lost most,
        when several did: they lost the same recent items)."""
        lost = 0
        for feed in self._stores:
            if feed.failure is not None:
                if self._feed_failure is None:
                    self._feed_failure = feed.failure
                lost = max(lost, feed.lost_items)
        if lost > self._uncounted:
            self._stats.inc("item_scraped_count", self._uncounted - lost)
            self._uncounted = lost

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> ItemPipelineManager:
        """ITEM_PIPELINES in order, item validation if asked for, then one FeedExporter
        per FEEDS entry (and the feed of invalid items)."""
        pipelines = build_components(
            {}, crawler.settings.view(ItemSettings).item_pipelines, crawler
        )
        pipelines = validation_pipelines(pipelines, crawler)
        manager = cls(
            pipelines,
            feeds=build_feeds(crawler),
            sinks=build_sinks(crawler),
            stats=crawler.stats,
            logger=crawler.logger,
            signals=getattr(crawler, "signals", None),
            invalid_feeds=[p.feed for p in pipelines if getattr(p, "feed", None)],
        )
        manager.formatted = getattr(crawler, "log_formatted", None)
        return manager

    # -- lifecycle --------------------------------------------------------------------
    async def open_spider(self, spider: Any) -> None:
        """Open every pipeline in order. If one fails, those already open are closed and
        the error is raised (with a note naming the pipeline): the crawl cannot start."""
        for pipeline in self.pipelines:
            method = getattr(pipeline, "open_spider", None)
            try:
                if callable(method):
                    await _call(method, spider)
            except Exception as exc:
                exc.add_note(f"while opening item pipeline {_name(pipeline)}")
                try:
                    await self.close_spider(spider)
                except Exception:  # the opening error is the one to report
                    self._log.exception("Error closing item pipelines after a failed open")
                raise
            self._opened.append(pipeline)

    async def close_spider(self, spider: Any) -> None:
        """Close the open pipelines in order, each even if another fails. Feeds are closed
        in a ``finally``, so they are finished even when this task is cancelled.

        A pipeline that fails to close may not have stored what it was given, so the
        first such error is raised once all are closed (with a note naming the pipeline;
        later ones are logged): the crawl fails. Once the feeds are closed,
        feed_slot_closed (one per feed, ``slot`` the FeedExporter) and
        feed_exporter_closed are sent."""
        opened, self._opened = self._opened, []
        feed_ids = {id(feed) for feed in self._feeds}
        feeds = [p for p in opened if id(p) in feed_ids]
        errors: list[Exception] = []
        try:
            for pipeline in opened:
                if id(pipeline) not in feed_ids:
                    await self._close_one(pipeline, spider, errors)
        finally:
            for feed in feeds:
                await self._close_one(feed, spider, errors)
                if feed_slot_closed in self._signals.live:
                    await self._signals.send_catch_log_async(feed_slot_closed, slot=feed)
            self._check_feeds()
            if feeds and feed_exporter_closed in self._signals.live:
                await self._signals.send_catch_log_async(feed_exporter_closed)
        if errors:
            for later in errors[1:]:
                self._log.error("Error closing item pipeline: %s", later, exc_info=later)
            raise errors[0]

    async def _close_one(self, pipeline: Any, spider: Any, errors: list[Exception]) -> None:
        method = getattr(pipeline, "close_spider", None)
        if not callable(method):
            return
        try:
            await _call(method, spider)
        except Exception as exc:
            exc.add_note(f"while closing item pipeline {_name(pipeline)}")
            self._stats.inc(f"pipeline/errors/{_name(pipeline)}")
            errors.append(exc)

    # -- items ------------------------------------------------------------------------
    async def process_item(
        self, item: Any, spider: Any, response: Any = None, origin: str | None = None
    ) -> Any | None:
        """The item as the last pipeline returned it, or None if it was dropped or a
        pipeline failed on it, or a ``MediaPending`` when a files or images pipeline
        holds it until its media tasks end (the caller queues its requests with the
        task's other requests). Only ``CloseSpider``, a ``FatalError`` (a feed or sink
        that cannot be written) and cancellation propagate. ``response`` is the one the
        item came from (None for a start item), for the item signals; ``origin`` where
        it came from (``<taskid>/<place in the callback's output>``, ``start/<place>``),
        which makes the identity sinks write it under when it declares no key."""
        if self._feed_failure is not None:
            raise StorageError(self._feed_failure)
        return await self._run(item, spider, response, 0, None, origin)

    async def media_done(
        self,
        request: Any,
        spider: Any,
        response: Any = None,
        error: BaseException | None = None,
    ) -> Any | None:
        """A media task of ``request`` ended (``response``, or ``error``): as
        ``process_item``, for the item the request carries, from the media pipeline
        that made the request on."""
        if self._feed_failure is not None:
            raise StorageError(self._feed_failure)
        state = request.meta[MEDIA_META]
        stage = state.get("stage")
        step = self._steps[stage] if isinstance(stage, int) and stage < len(self._steps) else None
        pipeline = step[3] if step is not None else None
        if pipeline is None or f"{type(pipeline).__module__}.{type(pipeline).__qualname__}" != (
            state.get("pipeline")
        ):
            self._log.error(
                "Media request %s belongs to pipeline %s at position %s, which ITEM_PIPELINES "
                "no longer has there; its item is lost",
                request, state.get("pipeline"), stage,
            )  # fmt: skip
            self._stats.inc("item_error_count")
            return None
        # The last media task of the item's chain has a taskid made from the item and
        # its origin: the item's origin from here on (see ``MediaPipeline``).
        origin = f"{request.taskid}/0" if self.sinks else None
        return await self._run(None, spider, response, stage, (request, response, error), origin)

    async def _run(
        self,
        item: Any,
        spider: Any,
        response: Any,
        start: int,
        media: tuple[Any, Any, BaseException | None] | None,
        origin: str | None = None,
    ) -> Any | None:
        """The steps from ``start`` on; ``media`` is a media task's end, which the step
        at ``start`` (its media pipeline) finishes instead of taking ``item``."""
        current = item
        steps = self._steps
        for index in range(start, len(steps)):
            name, method, is_async, media_pipeline = steps[index]
            try:
                if media_pipeline is None:
                    result = method(current, spider)
                    if is_async or result.__class__ is CoroutineType:
                        result = await result
                elif media is not None and index == start:
                    request, media_response, error = media
                    result = await media_pipeline.finish(request, spider, media_response, error)
                else:
                    origin = getattr(response, "url", "") if response is not None else ""
                    result = await media_pipeline.begin(current, spider, stage=index, origin=origin)
                if result.__class__ is MediaPending:
                    return result
            except DropItem as exc:
                if exc.__class__ is InvalidItem and exc.routed:
                    return None  # in the feed of invalid items (counted there)
                self._dropped(current, exc)
                if item_dropped in self._signals.live:
                    await self._signals.send_catch_log_async(
                        item_dropped, item=current, response=response, exception=exc, spider=spider
                    )
                return None
            except CloseSpider:
                raise  # the end of the crawl, not of one item
            except FatalError:
                self._check_feeds()
                raise
            except Exception as exc:
                if self.formatted is None:
                    self._log.exception(
                        "Error processing %s in item pipeline %s", _summary(current), name
                    )
                self._stats.inc("item_error_count")
                self._stats.inc(f"pipeline/errors/{name}")
                if item_error in self._signals.live:
                    await self._signals.send_catch_log_async(
                        item_error, item=current, response=response, spider=spider,
                        failure=Failure(exc),
                    )  # fmt: skip
                return None
            if result is None:
                self._forgot_return(name)
            else:
                current = result
        if self.sinks:
            try:
                for sink in self.sinks:
                    await sink.take(current, origin)
            except FatalError:
                self._check_feeds()
                raise
        self._stats.inc("item_scraped_count")
        if item_scraped in self._signals.live:
            await self._signals.send_catch_log_async(
                item_scraped, item=current, response=response, spider=spider
            )
        return current

    def _dropped(self, item: Any, exc: DropItem) -> None:
        self._stats.inc("item_dropped_count")
        self._stats.inc(f"item_dropped_reasons_count/{type(exc).__name__}")
        if self.formatted is None:
            reason = str(exc) or type(exc).__name__
            self._log.warning("Dropped: %s: %s", reason, _summary(item))

    def _forgot_return(self, name: str) -> None:
        if name in self._returned_none:
            return
        self._returned_none.add(name)
        self._log.warning(
            "%s.process_item returned None; return the item or raise DropItem. The item it "
            "was given goes on (this warning is shown once)",
            name,
        )
