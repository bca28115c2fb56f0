"""A crawl context for pipeline tests: real Settings and Stats, a fake clock."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from skitter._clock import FakeClock
from skitter.settings import Settings


class Stats(dict[str, Any]):
    """The StatsSink protocol over a dict (the engine package is not imported here, so
    these tests do not depend on it)."""

    def inc(self, key: str, count: int = 1) -> None:
        self[key] = self.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self[key] = value

    def max(self, key: str, value: float) -> None:
        if key not in self or value > self[key]:
            self[key] = value


@dataclass
class FakeCrawler:
    settings: Settings
    stats: Stats = field(default_factory=Stats)
    spider: Any = None
    clock: FakeClock = field(default_factory=FakeClock)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("skitter.test"))


@pytest.fixture
def make_crawler():
    def make(**settings: Any) -> FakeCrawler:
        return FakeCrawler(Settings(settings))

    return make
