"""Shared fixtures: real HTTP servers on 127.0.0.1, started per test."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest
from aiohttp import web

from skitter.settings import Settings
from skitter.testing import TestCrawler, serve_app
from skitter.testing._virtual import loop_factories

Serve = Callable[[web.Application], Awaitable[str]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "virtual_time: run on skitter.testing.VirtualTimeLoop (time jumps to the next timer; "
        "the crawl takes virtual_clock())",
    )


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Any:
    """The loop a test runs on (and its async fixtures with it): virtual time when
    marked ``virtual_time``."""
    return loop_factories(item.get_closest_marker("virtual_time") is not None)


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


class HostSite:
    """An app reachable under every loopback name (127.0.0.1, localhost), counting the
    hits by the host it was asked for, so a test can prove no request reached a host.

    ``pages`` maps a path to HTML, to ``(status, location)`` for a redirect, or to a
    handler ``(request) -> Response`` (or a coroutine of one).
    """

    def __init__(self, pages: dict[str, Any]) -> None:
        self.pages = pages
        self.hits: Counter[tuple[str, str]] = Counter()  # (host, path)
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    def on(self, host: str) -> int:
        """How many requests asked for ``host`` (any port)."""
        return sum(count for (name, _), count in self.hits.items() if name == host)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[(request.url.host or "", request.path)] += 1
        answer = self.pages.get(request.path)
        if answer is None:
            return web.Response(status=404, text="not found")
        if isinstance(answer, tuple):
            status, location = answer
            return web.Response(status=status, headers={"Location": location})
        if callable(answer):
            result = answer(request)
            if inspect.isawaitable(result):
                result = await result
            return result  # type: ignore[no-any-return]
        return web.Response(text=f"<html><body>{answer}</body></html>", content_type="text/html")


HostSiteFactory = Callable[..., Awaitable[tuple[HostSite, int]]]


@pytest.fixture
async def host_site() -> AsyncIterator[HostSiteFactory]:
    """``site, port = await host_site(pages, host="127.0.0.1")``: a HostSite served on
    ``host`` (``"::1"`` for IPv6) until the test ends."""
    async with AsyncExitStack() as stack:

        async def start(pages: dict[str, Any], host: str = "127.0.0.1") -> tuple[HostSite, int]:
            site = HostSite(pages)
            base = await stack.enter_async_context(serve_app(site.app, host=host))
            return site, int(base.rsplit(":", 1)[1])

        yield start
