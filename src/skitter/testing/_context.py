"""A stand-in for the crawler, for testing one component (a middleware, a pipeline) on
its own: real Settings, stats in a dict, a fake clock. Scrapy users know the idea as
``get_crawler``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from skitter._clock import FakeClock
from skitter.settings import Settings

__all__ = ["DictStats", "TestCrawler"]


class DictStats(dict[str, Any]):
    """The StatsSink protocol over a plain dict."""

    def inc(self, key: str, count: int = 1) -> None:
        self[key] = self.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self[key] = value

    def max(self, key: str, value: float) -> None:
        if key not in self or value > self[key]:
            self[key] = value


@dataclass
class TestCrawler:
    """Satisfies ``CrawlContext``: ``TestCrawler(Settings({...}))``."""

    __test__ = False  # not a pytest test class, whatever its name

    settings: Settings
    stats: DictStats = field(default_factory=DictStats)
    spider: Any = None
    clock: FakeClock = field(default_factory=FakeClock)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("skitter.test"))
