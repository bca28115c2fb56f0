"""Protocols shared by every layer, so lower layers never import higher ones.

A middleware, pipeline or scheduler sees the crawl only through ``CrawlContext``: the
resolved settings, a place to count things, and the spider. The concrete ``Crawler``
satisfies it; tests can pass anything that does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, Protocol

from skitter._clock import Clock
from skitter.settings import Settings

__all__ = ["CrawlContext", "CrawlStats", "StatsSink"]


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
