"""Scrapy's ``scrapy.statscollectors``: the stats collector classes, by Scrapy's names.

A crawl keeps its stats in its own object (``crawler.stats``, with Scrapy's method
names), and ``STATS_CLASS`` stays refused: the stats are the crawl's, not replaceable.
These classes are for the code that names them: a plug-in that builds a collector of its
own (scrapy-poet's injector tests build a ``MemoryStatsCollector``), registers
``StatsCollector`` as a type to inject ``crawler.stats`` by, or subclasses one.
``crawler.stats`` counts as a ``StatsCollector`` (``isinstance`` says so), since it
answers every method of one.
"""

from __future__ import annotations

import logging
import pprint
import warnings
from typing import Any

from skitter._types import ScrapyStatsNames
from skitter.exceptions import ScrapyDeprecationWarning

__all__ = ["DummyStatsCollector", "MemoryStatsCollector", "StatsCollector", "StatsT"]

log = logging.getLogger("skitter.statscollectors")

#: Scrapy's alias for a stats dict.
StatsT = dict[str, Any]


class _CollectorMeta(type):
    """Makes a crawl's own stats object an instance of ``StatsCollector``: it has every
    method of one, and code checks ``isinstance(crawler.stats, StatsCollector)``."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        return cls is StatsCollector and _is_crawl_stats(instance)


def _is_crawl_stats(instance: Any) -> bool:
    from skitter.engine import Stats

    return isinstance(instance, Stats)


class StatsCollector(ScrapyStatsNames, metaclass=_CollectorMeta):
    """A dict of stats for one crawler, dumped to the log when the spider closes
    (``STATS_DUMP``), as Scrapy's base collector."""

    def __init__(self, crawler: Any) -> None:
        self._dump = bool(crawler.settings.getbool("STATS_DUMP"))
        self._stats: StatsT = {}
        self._crawler = crawler

    # -- the primitives ScrapyStatsNames builds Scrapy's method names on -----------------
    def inc(self, key: str, count: int = 1) -> None:
        self._stats[key] = self._stats.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self._stats[key] = value

    def max(self, key: str, value: Any) -> None:
        current = self._stats.get(key)
        self._stats[key] = value if current is None else max(current, value)

    def get(self, key: str, default: Any = None) -> Any:
        return self._stats.get(key, default)

    def to_dict(self) -> StatsT:
        return self._stats

    # -- Scrapy's methods, with its warning for the spider argument it dropped ----------
    def get_value(self, key: str, default: Any = None, spider: Any = None) -> Any:
        _spider_arg(self, "get_value", spider)
        return self._stats.get(key, default)

    def get_stats(self, spider: Any = None) -> StatsT:
        _spider_arg(self, "get_stats", spider)
        return self._stats

    def set_value(self, key: str, value: Any, spider: Any = None) -> None:
        _spider_arg(self, "set_value", spider)
        self._stats[key] = value

    def set_stats(self, stats: StatsT, spider: Any = None) -> None:
        _spider_arg(self, "set_stats", spider)
        self._stats = stats

    def inc_value(self, key: str, count: int = 1, start: int = 0, spider: Any = None) -> None:
        _spider_arg(self, "inc_value", spider)
        self._stats[key] = self._stats.setdefault(key, start) + count

    def max_value(self, key: str, value: Any, spider: Any = None) -> None:
        _spider_arg(self, "max_value", spider)
        self.max(key, value)

    def min_value(self, key: str, value: Any, spider: Any = None) -> None:
        _spider_arg(self, "min_value", spider)
        current = self._stats.get(key)
        self._stats[key] = value if current is None else min(current, value)

    def clear_stats(self, spider: Any = None) -> None:
        _spider_arg(self, "clear_stats", spider)
        self._stats.clear()

    def open_spider(self, spider: Any = None) -> None:
        """Nothing to do when the spider opens; a subclass may start counting here."""

    def close_spider(self, spider: Any = None, reason: str = "finished") -> None:
        """Dump the stats to the log (``STATS_DUMP``) and keep them (``_persist_stats``)."""
        if self._dump:
            log.info(
                "Dumping Scrapy stats:\n%s",
                pprint.pformat(self._stats),
                extra={"spider": spider or getattr(self._crawler, "spider", None)},
            )
        self._persist_stats(self._stats)

    def _persist_stats(self, stats: StatsT) -> None:
        """Where a subclass keeps the stats of a closed spider; the base keeps nothing."""


class MemoryStatsCollector(StatsCollector):
    """Keeps each closed spider's stats in ``spider_stats``, by spider name."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.spider_stats: dict[str, StatsT] = {}

    def _persist_stats(self, stats: StatsT) -> None:
        spider = getattr(self._crawler, "spider", None)
        if spider is not None:
            self.spider_stats[spider.name] = stats


class DummyStatsCollector(StatsCollector):
    """Collects nothing: every value read is the default (Scrapy's no-op collector)."""

    def get_value(self, key: str, default: Any = None, spider: Any = None) -> Any:
        return default

    def set_value(self, key: str, value: Any, spider: Any = None) -> None:
        pass

    def set_stats(self, stats: StatsT, spider: Any = None) -> None:
        pass

    def inc_value(self, key: str, count: int = 1, start: int = 0, spider: Any = None) -> None:
        pass

    def max_value(self, key: str, value: Any, spider: Any = None) -> None:
        pass

    def min_value(self, key: str, value: Any, spider: Any = None) -> None:
        pass


def _spider_arg(collector: StatsCollector, method: str, spider: Any) -> None:
    """Scrapy deprecated the ``spider`` argument of the collector's methods: one
    collector serves one crawler. It is accepted, with Scrapy's warning."""
    if spider is not None:
        warnings.warn(
            f"Passing a 'spider' argument to {type(collector).__name__}.{method}() is "
            "deprecated and the argument will be removed in a future Scrapy version.",
            ScrapyDeprecationWarning,
            stacklevel=3,
        )
