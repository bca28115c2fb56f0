"""A project as the engine runs it: one spider with its own components and counters.

The crawler builds the components; the engine only moves data between them. Keeping
them per project is what lets one engine run several spiders at once without
any of them sharing pipelines, middlewares, cookies or statistics.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skitter._clock import Clock, SystemClock
from skitter._types import CrawlStats, StartRecord
from skitter.downloader import Downloader
from skitter.downloader.wiring import give_up_level
from skitter.engine._monitor import ProjectMonitor, TaskCounts
from skitter.engine._starts import LocalStartRecord, judge_starts
from skitter.exceptions import ConfigError, FatalError
from skitter.frontier import FrontierCounts
from skitter.pipelines import ItemPipelineManager
from skitter.scheduler import ProjectScheduler
from skitter.scheduler.wiring import DONE
from skitter.settings import EngineSettings, Settings
from skitter.signals import SignalManager, spider_closed, spider_opened
from skitter.spider import SpiderMiddlewareManager, has_config_callbacks

if TYPE_CHECKING:
    from skitter.engine._feeder import FeedClaim

__all__ = ["Project"]

log = logging.getLogger("skitter.engine")


@dataclass(eq=False)
class Project:
    """One spider's components and the engine's bookkeeping for it."""

    name: str
    spider: Any
    settings: Settings
    stats: CrawlStats
    scheduler: ProjectScheduler
    downloader: Downloader
    spider_mw: SpiderMiddlewareManager
    pipelines: ItemPipelineManager

    in_flight: int = 0
    #: The leases of the tasks running now (download, callback, pipelines): upkeep
    #: renews them. Leases, not taskids: a stale attempt and a newer one are two.
    running: set[Any] = field(default_factory=set)
    start_exhausted: bool = False
    #: Start requests queued so far (a resumed job skips them).
    start_offset: int = 0
    #: For workers of a distributed crawl: who feeds the start requests (the cluster's
    #: ``StartClaim``).
    start_claim: FeedClaim | None = None
    #: How the start requests ended (``_starts``): this process's record, or the job's.
    starts: StartRecord = field(default_factory=LocalStartRecord)
    #: Start requests (not items) this process queued in this run.
    start_requests_queued: int = 0
    #: This process queued every start request, first to last, in this run: it judges
    #: whether any got anywhere (``judge_starts``).
    fed_every_start: bool = False
    #: Flush the feeds, item stores and sinks before each ack (a shared frontier
    #: acknowledges at once, so the items must be in the file, or in Redis, by then; a
    #: sink commits its items only when flushed).
    flush_feeds_before_ack: bool = False
    #: Why the project is closing (None while it runs); set once.
    closing: str | None = None
    closed: bool = False
    #: Why the crawl failed (``fail``): it then ends with finish_reason "failed" and
    #: ``Crawler.run()`` raises. The first reason is kept; later ones are logged.
    failure: str | None = None
    #: Set by the engine when the queue runs low and more start requests are wanted.
    hungry: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: float = 0.0
    #: (stats key, limit, close reason) for each CLOSESPIDER_* count limit that is set.
    limits: list[tuple[str, int, str]] = field(default_factory=list)
    close_after: float = 0.0  # CLOSESPIDER_TIMEOUT
    #: Whether any callback of the spider has ``@config`` defaults to apply.
    has_callback_config: bool = False
    #: CONCURRENT_ITEMS: items of one callback in the pipelines at once (``_items``).
    concurrent_items: int = 1
    #: RETRY_GIVE_UP_LOG_LEVEL: the level of the "Gave up retrying" line.
    give_up_level: int = logging.ERROR
    #: Active tasks, recent outcomes and windowed counts, for people watching.
    monitor: ProjectMonitor = field(default_factory=lambda: ProjectMonitor(SystemClock()))
    #: Where the project reads the time (CLOSESPIDER_TIMEOUT, the stats' times).
    clock: Clock = field(default_factory=SystemClock)
    #: The crawler's signals (``crawler.signals``): the engine sends through them.
    signals: SignalManager = field(default_factory=SignalManager)
    #: The frontier's counts at the last look (``look``: the engine's upkeep, about once
    #: a second, and the end of the crawl).
    frontier_counts: FrontierCounts = field(default_factory=lambda: FrontierCounts(0, 0, 0))

    def __post_init__(self) -> None:
        self.has_callback_config = has_config_callbacks(self.spider)
        own = self.settings.view(EngineSettings)
        self.close_after = own.closespider_timeout
        self.concurrent_items = own.concurrent_items
        self.give_up_level = give_up_level(own.retry_give_up_log_level)
        if self.concurrent_items < 1:
            raise ConfigError(f"CONCURRENT_ITEMS must be 1 or more, not {self.concurrent_items}")
        for setting, key, reason in (
            ("CLOSESPIDER_ITEMCOUNT", "item_scraped_count", "closespider_itemcount"),
            ("CLOSESPIDER_PAGECOUNT", "response_received_count", "closespider_pagecount"),
            ("CLOSESPIDER_ERRORCOUNT", "spider_exceptions/count", "closespider_errorcount"),
        ):
            limit = self.settings[setting]
            if limit:
                self.limits.append((key, limit, reason))

    async def open(self) -> None:
        self.started_at = self.clock.monotonic()
        self.stats.set("start_time", self.clock.time())
        await self.downloader.open()
        await self.pipelines.open_spider(self.spider)
        if spider_opened in self.signals.live:
            await self.signals.send_catch_log_async(spider_opened, spider=self.spider)

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        """The project's tasks by where they are (see ``TaskCounts``), with the
        frontier's ``counts`` (default: those of the last look)."""
        counts = counts if counts is not None else self.frontier_counts
        return TaskCounts(
            waiting=counts.ready,
            delayed=counts.delayed,
            leased=self.scheduler.held,
            in_flight=len(self.running),
            done=int(self.stats.get(DONE, 0) or 0),
        )

    async def look(self) -> None:
        """Read the frontier's counts, and set the stats' ``tasks/...`` values from them
        (``tasks/done`` is counted as tasks are settled)."""
        self.frontier_counts = await self.scheduler.frontier.counts(self.clock.time())
        for key, value in self.task_counts().stats().items():
            if key != DONE:
                self.stats.set(key, value)

    def check_limits(self) -> None:
        """The CLOSESPIDER_* settings, checked where their counters move."""
        stats = self.stats
        for key, limit, reason in self.limits:
            if stats.get(key, 0) >= limit:
                self.request_close(reason)
        left = self.time_left()
        if left is not None and left <= 0:
            self.request_close("closespider_timeout")

    def time_left(self) -> float | None:
        """Seconds until CLOSESPIDER_TIMEOUT, for the engine to wake then (None: none
        set). The one computation ``check_limits`` decides by too: a wake at the time it
        gave always finds the timeout reached, even with float rounding."""
        if not self.close_after:
            return None
        return max(0.0, (self.started_at + self.close_after) - self.clock.monotonic())

    def request_close(self, reason: str) -> bool:
        """Ask the project to close; True if this call started the closing."""
        if self.closing is not None:
            return False
        self.closing = reason
        self.hungry.set()  # wake the start-request feeder so that it can finish
        log.info("Closing spider %s (%s)", self.name, reason)
        return True

    def fail(self, error: BaseException | str, *, stop: bool = True) -> None:
        """The crawl did not, or cannot, do what was asked: record why, and with ``stop``
        close the project now (no more dispatches; the tasks at hand are not settled).

        ``stop=False`` is for a failure after which the rest can still run correctly
        (the start requests broke off: what they queued is crawled), but the run as a
        whole has failed all the same."""
        reason = str(error) or type(error).__name__
        if self.failure is None:
            self.failure = reason
            log.error("Crawl of spider %s failed: %s", self.name, reason)
            self.stats.set("finish_error", reason)
        elif reason != self.failure:
            log.error("Spider %s, also: %s", self.name, reason)
        if stop:
            self.request_close("failed")

    async def close(self) -> None:
        """Close every component, each even if an earlier one fails, so that feeds are
        finalized and connections released whatever happened. A step that loses what
        the crawl produced if it fails (the spider's ``closed``, the pipelines and feeds,
        the frontier's last write) fails the crawl; the others are only logged."""
        if self.closed:
            return
        await judge_starts(self)
        try:
            await self.look()  # the tasks/... values as the crawl leaves them
        except Exception as exc:  # the store out of reach: they stay as last seen
            log.debug("Cannot count the tasks of %s at the end: %s", self.name, exc)
        self.closed = True
        reason = self.closing or "finished"
        steps: list[tuple[str, Any, bool]] = [
            ("spider.closed", self._spider_closed(reason), True),
            ("pipelines", self.pipelines.close_spider(self.spider), True),
            ("downloader", self.downloader.close(), False),
            ("scheduler", self.scheduler.close(), False),
            ("frontier", self.scheduler.frontier.close(), True),
        ]
        for what, step, vital in steps:
            try:
                await step
            except FatalError as exc:
                # A store that refused a write says so itself (and has usually failed the
                # crawl already, with the same words): no traceback, no second message.
                self.stats.inc("engine/close_errors")
                self.fail(exc, stop=False)
            except Exception as exc:
                log.exception("Error while closing %s of spider %s", what, self.name)
                self.stats.inc("engine/close_errors")
                if vital:
                    self.fail(f"closing {what}: {type(exc).__name__}: {exc}", stop=False)
        self.stats.set("finish_time", self.clock.time())
        self.stats.set("finish_reason", "failed" if self.failure is not None else reason)
        self.stats.set("elapsed_time_seconds", round(self.clock.monotonic() - self.started_at, 3))
        if spider_closed in self.signals.live:
            await self.signals.send_catch_log_async(
                spider_closed, spider=self.spider, reason=self.stats.get("finish_reason")
            )

    async def _spider_closed(self, reason: str) -> None:
        hook = getattr(self.spider, "closed", None)
        if callable(hook):
            result = hook(reason)
            if inspect.isawaitable(result):
                await result
