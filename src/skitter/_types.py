"""Protocols shared by every layer, so lower layers never import higher ones.

A middleware, pipeline or scheduler sees the crawl only through ``CrawlContext``: the
resolved settings, a place to count things, and the spider. The concrete ``Crawler``
satisfies it; tests can pass anything that does.

``DownloadReport`` is the feedback a download leaves for the scheduler's slots; it lives
here because the downloader writes it and the scheduler reads it, and those two are
peers that never import each other. ``StartRecord`` likewise: the engine writes and
reads it, a worker's is the cluster's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from skitter._clock import Clock
from skitter.settings import Settings

__all__ = [
    "LISTED_STARTS",
    "CrawlContext",
    "CrawlStats",
    "DownloadReport",
    "ScrapyStatsNames",
    "StartOutcomes",
    "StartRecord",
    "StatsSink",
]


class StatsSink(Protocol):
    """Where components report what happened. Keys are ``area/what``, e.g.
    ``downloader/response_status_count/200``."""

    def inc(self, key: str, count: int = 1) -> None: ...

    def set(self, key: str, value: Any) -> None: ...

    def max(self, key: str, value: float) -> None: ...

    def get(self, key: str, default: Any = None) -> Any: ...


class CrawlStats(StatsSink, Protocol):
    """A crawl's statistics: where its components report, and what is read back at the
    end (``engine.Stats``; a worker's ``cluster.RedisStats`` wraps one)."""

    def __iter__(self) -> Iterator[str]: ...

    def to_dict(self) -> dict[str, Any]:
        """Every value, sorted by key."""
        ...


class ScrapyStatsNames:
    """Scrapy's ``StatsCollector`` method names over a stats object's own ``inc``,
    ``set``, ``max``, ``get`` and ``to_dict``: a mixin, so that extensions written for
    ``crawler.stats.inc_value(...)`` run unchanged on every stats implementation.
    ``spider`` arguments are accepted and unused: one stats object serves one spider."""

    __slots__ = ()

    def get_value(self: CrawlStats, key: str, default: Any = None, spider: Any = None) -> Any:
        return self.get(key, default)

    def set_value(self: CrawlStats, key: str, value: Any, spider: Any = None) -> None:
        self.set(key, value)

    def inc_value(
        self: CrawlStats, key: str, count: int = 1, start: int = 0, spider: Any = None
    ) -> None:
        if start and self.get(key) is None:
            self.set(key, start)
        self.inc(key, count)

    def max_value(self: CrawlStats, key: str, value: Any, spider: Any = None) -> None:
        self.max(key, value)

    def min_value(self: CrawlStats, key: str, value: Any, spider: Any = None) -> None:
        current = self.get(key)
        if current is None or value < current:
            self.set(key, value)

    def get_stats(self: CrawlStats, spider: Any = None) -> dict[str, Any]:
        return self.to_dict()

    def open_spider(self, spider: Any = None) -> None:
        """Nothing to open: the crawl opens its stats object with itself; kept so that
        code driving a collector by hand (tests, ``get_crawler`` users) runs."""

    def close_spider(self, spider: Any = None, reason: str = "finished") -> None:
        """Nothing to close: the values stay readable after the crawl, as in Scrapy's
        memory collector."""


class CrawlContext(Protocol):
    """What a component may know of the crawl it belongs to."""

    @property
    def settings(self) -> Settings: ...

    @property
    def stats(self) -> StatsSink: ...

    @property
    def spider(self) -> Any: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def logger(self) -> logging.Logger | logging.LoggerAdapter[logging.Logger]: ...


class DownloadReport(NamedTuple):
    """How one download went, for its slot: written by the downloader (also when the
    download failed or was cancelled), read by ``ProjectScheduler.record``.

    The slot itself is not in it: which slot a request belongs to is the scheduler's
    rule (DOWNLOAD_SLOT_BY), applied to the task's request."""

    #: Seconds the download took through the middlewares (for AutoThrottle).
    latency: float
    #: The response's status (a 429 or 503 backs the slot off); None without one.
    status: int | None = None
    #: A RetryLater's delay (Retry-After), for the slot's back-off.
    retry_after: float | None = None
    #: Whether it ended without an exception (for the slot's breaker).
    ok: bool = True
    #: Whether robots.txt is obeyed: only then is ``crawl_delay`` news for the slot.
    robots: bool = False
    #: robots.txt's Crawl-delay for the request's host (None: none asked, or not known yet).
    crawl_delay: float | None = None


#: Refused start requests a ``StartRecord`` keeps to name (the rest are counted).
LISTED_STARTS = 20


@dataclass
class StartOutcomes:
    """What became of a crawl's start requests so far."""

    accepted: bool = False
    refused: int = 0
    #: (URL, reason) of the first refused ones.
    listed: list[tuple[str, str]] = field(default_factory=list)


class StartRecord(Protocol):
    """Where the outcomes of a crawl's start requests are kept (``engine._starts``):
    this process's, or a distributed job's (``cluster.StartClaim``)."""

    async def accepted(self) -> None:
        """A start request's response reached its callback."""
        ...

    async def refused(self, url: str, reason: str) -> None:
        """A start request's task ended without a response the spider accepted."""
        ...

    async def outcomes(self) -> StartOutcomes: ...
