"""Fixtures for the downloader tests: a crawl context and opened transports/downloaders.

Every test talks to real aiohttp.web servers on 127.0.0.1 (the ``serve`` fixture of
tests/conftest.py); nothing about HTTP is mocked.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import pytest

from skitter._clock import Clock, FakeClock
from skitter.downloader import AiohttpTransport, Downloader
from skitter.downloader._transports import transport_class
from skitter.settings import Settings


class MemoryStats:
    """A StatsSink that is a plain dict, so tests can compare it."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def inc(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value

    def max(self, key: str, value: float) -> None:
        self.values[key] = max(self.values.get(key, value), value)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


@dataclass
class Context:
    """Satisfies ``CrawlContext``."""

    settings: Settings
    spider: Any = None
    stats: MemoryStats = field(default_factory=MemoryStats)
    clock: Clock = field(default_factory=FakeClock)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("skitter.test"))


# Fail fast in tests: a hung test server must not hold a test for the 180 s default.
FAST = {"DOWNLOAD_TIMEOUT": 10.0, "DOWNLOAD_CONNECT_TIMEOUT": 5.0, "DOWNLOAD_READ_TIMEOUT": 5.0}

MakeDownloader = Callable[..., Awaitable[Downloader]]
MakeTransport = Callable[..., Awaitable[tuple[Any, MemoryStats]]]

#: Every HTTP transport, for the tests that hold for each (limits, bombs, truncation).
HTTP_TRANSPORTS = ["aiohttp", "httpx", "curl"]


def build_transport(name: str, settings: Settings, stats: Any) -> Any:
    """The transport ``name`` (DOWNLOAD_TRANSPORT's names) over ``settings``."""
    if name == "aiohttp":
        return AiohttpTransport(settings, stats)
    return transport_class(name)(settings, stats)


def make_context(settings: dict[str, Any] | None = None, spider: Any = None) -> Context:
    return Context(Settings({**FAST, **(settings or {})}), spider)


@pytest.fixture
async def make_downloader() -> AsyncIterator[MakeDownloader]:
    """``dl = await make_downloader(settings, spider=...)``: an open Downloader;
    ``dl.crawler`` is its Context (stats, clock)."""
    async with AsyncExitStack() as stack:

        async def make(settings: dict[str, Any] | None = None, spider: Any = None) -> Downloader:
            ctx = make_context(settings, spider)
            return await stack.enter_async_context(Downloader(ctx, spider))

        yield make


@pytest.fixture
async def make_transport() -> AsyncIterator[MakeTransport]:
    """``transport, stats = await make_transport(settings)``: an open AiohttpTransport;
    ``make_transport(settings, "httpx")`` another (``HTTP_TRANSPORTS``)."""
    async with AsyncExitStack() as stack:

        async def make(
            settings: dict[str, Any] | None = None, name: str = "aiohttp"
        ) -> tuple[Any, MemoryStats]:
            ctx = make_context(settings)
            transport = build_transport(name, ctx.settings, ctx.stats)
            await stack.enter_async_context(transport)
            return transport, ctx.stats

        yield make
