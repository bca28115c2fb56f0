"""Crawl statistics: a flat dict of counters that every layer reports into.

Keys follow Scrapy's ``area/what`` naming (``downloader/response_status_count/200``,
``item_scraped_count``), so dashboards and habits built for Scrapy's stats carry over.
Reporting is a dict update: cheap enough for the hot path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from skitter._types import ScrapyStatsNames

__all__ = ["Stats"]


class Stats(ScrapyStatsNames):
    """Counters and values for one project's crawl; Scrapy's method names too
    (``inc_value``, ``get_value``, ...)."""

    __slots__ = ("_values",)

    #: The crawl counts Scrapy's core stats itself: ``CoreStats`` must not count again.
    counts_core_stats = True

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def inc(self, key: str, count: int = 1) -> None:
        values = self._values
        values[key] = values.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self._values[key] = value

    def max(self, key: str, value: float) -> None:
        current = self._values.get(key)
        if current is None or value > current:
            self._values[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def clear_stats(self, spider: Any = None) -> None:
        self._values.clear()

    def set_stats(self, stats: dict[str, Any], spider: Any = None) -> None:
        self._values = dict(stats)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def to_dict(self) -> dict[str, Any]:
        """A sorted copy, safe to serialize."""
        return dict(sorted(self._values.items()))

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
