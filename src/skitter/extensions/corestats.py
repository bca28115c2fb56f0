"""Scrapy's ``scrapy.extensions.corestats``: ``CoreStats``, the extension that counts a
crawl's core stats (start and finish times, elapsed seconds, items scraped and dropped,
responses received, the finish reason) into a stats collector.

A skitter crawl counts these itself, into its own stats, so ``CoreStats`` never counts
into those (it would count everything twice): built for a crawl whose ``crawler.stats``
is its own, it connects to nothing. It counts into a collector of one's own
(``scrapy.statscollectors.StatsCollector`` and its subclasses), as Scrapy's tests and
tools that drive a collector by hand do.
"""

from __future__ import annotations

from datetime import UTC, datetime
from time import monotonic
from typing import Any, Self

from skitter.signals import (
    item_dropped,
    item_scraped,
    response_received,
    spider_closed,
    spider_opened,
)

__all__ = ["CoreStats"]


class CoreStats:
    """Counts Scrapy's core stats into ``stats`` on the crawl's signals."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.start_time: datetime | None = None
        self._started = 0.0

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        made = cls(crawler.stats)
        if not getattr(crawler.stats, "counts_core_stats", False):
            for handler, signal in (
                (made.spider_opened, spider_opened),
                (made.spider_closed, spider_closed),
                (made.item_scraped, item_scraped),
                (made.response_received, response_received),
                (made.item_dropped, item_dropped),
            ):
                crawler.signals.connect(handler, signal=signal)
        return made

    def spider_opened(self, spider: Any) -> None:
        self.start_time = datetime.now(tz=UTC)
        self._started = monotonic()
        self.stats.set_value("start_time", self.start_time)

    def spider_closed(self, spider: Any, reason: str) -> None:
        self.stats.set_value("finish_time", datetime.now(tz=UTC))
        self.stats.set_value("elapsed_time_seconds", monotonic() - self._started)
        self.stats.set_value("finish_reason", reason)

    def item_scraped(self, item: Any, spider: Any) -> None:
        self.stats.inc_value("item_scraped_count")

    def response_received(self, spider: Any) -> None:
        self.stats.inc_value("response_received_count")

    def item_dropped(self, item: Any, spider: Any, exception: BaseException) -> None:
        self.stats.inc_value("item_dropped_count")
        self.stats.inc_value(f"item_dropped_reasons_count/{type(exception).__name__}")
