"""Shared fixtures (real HTTP servers on 127.0.0.1, started per test) and the markers
that say what a test needs, put on every test as it is collected."""

from __future__ import annotations

import inspect
import os
import types
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from functools import cache
from typing import Any

import pytest

# The frontier contract suite lives in the package (tests/frontier and tests/cluster run
# it): have pytest rewrite its asserts, before any test module imports it.
pytest.register_assert_rewrite("skitter.testing.frontier_contract")

from aiohttp import web  # noqa: E402
from hypothesis import settings  # noqa: E402

from skitter.settings import Settings  # noqa: E402
from skitter.testing import TestCrawler, serve_app  # noqa: E402
from skitter.testing._virtual import loop_factories  # noqa: E402

Serve = Callable[[web.Application], Awaitable[str]]

# No per-example deadline: it is a wall-clock tolerance, and on a loaded machine (or under
# coverage) an example that takes 250 ms would fail a property that says nothing of time.
# Under CI (``CI=true``) the searches are derandomized: every run tries the same examples
# (seeded from each test's name), so a red CI run fails again on a laptop, and a green one
# is not luck; a developer's run explores new ones, and keeps its failures in the example
# database. ``HYPOTHESIS_PROFILE`` picks one by name.
settings.register_profile("skitter", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
_IN_CI = os.environ.get("CI", "").lower() == "true"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _IN_CI else "skitter"))


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


# -- markers: what a test needs, read from what it uses ------------------------------------
#: A fixture (or one it depends on) -> the marker of what it starts.
NEEDS_BY_FIXTURE = {
    "redis_server": "redis",
    "redis_url": "redis",
    "chromium": "browser",
    "cli_process": "subprocess",
    "browser": "browser",
    "serve": "network",
    "host_site": "network",
}
#: What a test calls directly, or through a helper of its module (not a fixture) -> the
#: marker: a test that starts its own redis-server, child process or server. Names, as
#: its code (and the code of the helpers it names) uses them.
NEEDS_BY_NAME = {
    "redis": {"RedisServer", "require_redis_server", "RedisClusterSet", "SentinelSet"},
    "subprocess": {"create_subprocess_exec", "Popen", "check_output", "executable"},
    "network": {"serve_app", "TCPSite", "start_server", "ThreadedMotoServer", "FTPServer"},
    "browser": {"browser_problem", "chromium_pids", "kill_chromium"},
    "slow": {"ThreadedMotoServer"},  # moto's S3 server: seconds to start and to answer
}
#: Markers whose tests need more than this process: the slow tier (``-m e2e``).
E2E = frozenset({"redis", "browser", "subprocess", "slow"})


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names ``code`` uses, nested functions included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


@cache
def _own_needs(obj: Any) -> tuple[frozenset[str], tuple[Any, ...]]:
    """What ``obj`` (a test, a helper function or class) starts itself, and the helpers
    of its module it names. Read from its code, not its text: cheap at collection."""
    functions = [obj] if inspect.isfunction(obj) else []
    if inspect.isclass(obj):
        functions = [f for f in vars(obj).values() if inspect.isfunction(f)]
    names: set[str] = set()
    for function in functions:
        names |= _code_names(function.__code__)
    needs = frozenset(need for need, known in NEEDS_BY_NAME.items() if names & known)
    module = getattr(obj, "__module__", None)
    scope = functions[0].__globals__ if functions else {}
    helpers = tuple(
        found
        for name in names
        if (inspect.isfunction(found := scope.get(name)) or inspect.isclass(found))
        and found.__module__ == module
    )
    return needs, helpers


def _source_needs(test: Any) -> set[str]:
    """What ``test`` starts, itself or through the helpers of its module, at any depth."""
    needs: set[str] = set()
    seen, todo = {test}, [test]
    while todo:
        own, helpers = _own_needs(todo.pop())
        needs |= own
        for helper in helpers:
            if helper not in seen:
                seen.add(helper)
                todo.append(helper)
    return needs


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by what it needs (``redis``, ``browser``, ``subprocess``,
    ``network``; ``e2e`` for the first three and ``slow``), from the fixtures it uses
    and what it (or a helper of its module) starts, so a new test is marked without
    anyone remembering to."""
    for item in items:
        needs = {
            NEEDS_BY_FIXTURE[f] for f in getattr(item, "fixturenames", ()) if f in NEEDS_BY_FIXTURE
        }
        function = getattr(item, "function", None)
        if function is not None:
            needs |= _source_needs(function)
        fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        for definitions in fixtures.values():  # the fixtures it uses, at any depth
            for definition in definitions:
                needs |= _source_needs(definition.func)
        needs |= {mark.name for mark in item.iter_markers() if mark.name in E2E}
        if needs & E2E:
            needs.add("e2e")
        for name in sorted(needs):
            item.add_marker(name)
