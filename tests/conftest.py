"""Shared fixtures: real HTTP servers on 127.0.0.1, started per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest
from aiohttp import web

from skitter.settings import Settings
from skitter.testing import TestCrawler, serve_app

Serve = Callable[[web.Application], Awaitable[str]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """``base_url = await serve(app)``: run an aiohttp app on a free loopback port until
    the test ends."""
    async with AsyncExitStack() as stack:

        async def start(app: web.Application) -> str:
            return await stack.enter_async_context(serve_app(app))

        yield start


@pytest.fixture
def make_crawler() -> Callable[..., TestCrawler]:
    """``make_crawler(NAME=value, ...)``: a crawl context for testing one component."""

    def make(**settings: Any) -> TestCrawler:
        return TestCrawler(Settings(settings))

    return make
