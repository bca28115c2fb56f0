"""A local site, a running crawl of it, and a headless Chromium, for the dashboard's tests.

``TreeSite`` is endless (``/p/N`` links to ``/p/2N+1`` and ``/p/2N+2``), so a crawl of
it runs until the test stops it; it records when each request arrived, which is how
tests see a rate change or a pause take effect. ``/flaky/NAME`` fails with 500 the
first time and succeeds after; ``/broken/NAME`` always fails with 503; ``/hang`` waits
until the test releases it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.dashboard import Dashboard
from skitter.testing import wait_until

#: Retries off, so a failing page is a FAILED task at once; short shutdown for teardown.
CRAWL_SETTINGS: dict[str, Any] = {
    "RETRY_TIMES": 0,
    "CONCURRENT_REQUESTS": 4,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "SHUTDOWN_TIMEOUT": 0.5,
    "LOG_LEVEL": "WARNING",
    "ROBOTSTXT_OBEY": False,
}


class TreeSite:
    """An endless site that records arrivals; see the module docstring."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay
        self.arrivals: list[float] = []  # loop time of each /p/ request
        self.hits: Counter[str] = Counter()
        self.release_hang = asyncio.Event()
        self.app = web.Application()
        self.app.router.add_get("/p/{n:\\d+}", self.tree)
        self.app.router.add_get("/flaky/{name}", self.flaky)
        self.app.router.add_get("/broken/{name}", self.broken)
        self.app.router.add_get("/hang", self.hang)
        self.app.router.add_get("/x/{tail:.*}", self.markup)

    async def tree(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        self.arrivals.append(asyncio.get_running_loop().time())
        self.hits[request.path] += 1
        # the site's own pace, so that a crawl is under way when steered
        await asyncio.sleep(self.delay)
        links = "".join(f'<a href="/p/{m}">{m}</a>' for m in (2 * n + 1, 2 * n + 2))
        return web.Response(text=f"<html><body>{links}</body></html>", content_type="text/html")

    async def flaky(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        status = 500 if self.hits[request.path] == 1 else 200
        return web.Response(text="flaky", status=status, content_type="text/html")

    async def broken(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        return web.Response(text="broken", status=503, content_type="text/html")

    async def hang(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        await self.release_hang.wait()
        return web.Response(text="released", content_type="text/html")

    async def markup(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        title = "<script>window.__pwned = 'title'</script>"
        body = f"<html><head><title>{title}</title></head><body>x</body></html>"
        return web.Response(text=body, status=500, content_type="text/html")

    def arrivals_between(self, start: float, end: float) -> int:
        return sum(1 for t in self.arrivals if start <= t < end)


def tree_spider(
    name: str, extra: Iterable[str | Callable[[str], Request]] = (), **attrs: Any
) -> type[Spider]:
    """A spider that walks the tree from ``BASE`` and first fetches ``extra`` (paths
    relative to ``BASE``, or functions of ``BASE`` making a request) at a high priority,
    so they are not stuck behind the endless tree."""

    class TreeSpider(Spider):
        def start_requests(self) -> Any:
            base = self.settings["BASE"]
            for item in extra:
                yield item(base) if callable(item) else Request(base + item, priority=100)
            yield Request(base + "/p/0")

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a")

    TreeSpider.name = name
    for key, value in attrs.items():
        setattr(TreeSpider, key, value)
    return TreeSpider


@dataclass
class Running:
    """A crawl in progress with its dashboard; ``http`` is a session for the API."""

    crawler: Crawler
    site: TreeSite
    dashboard: Dashboard
    base: str
    http: aiohttp.ClientSession
    crawlers: list[Crawler] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.dashboard.url

    async def csrf(self) -> str:
        async with self.http.get(self.url + "api/session") as resp:
            return str((await resp.json())["csrf"])

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        headers = {"X-Skitter-CSRF": await self.csrf(), **kwargs.pop("headers", {})}
        async with self.http.post(self.url + path, json=body, headers=headers, **kwargs) as resp:
            return resp.status, await resp.json()

    async def get(self, path: str) -> Any:
        async with self.http.get(self.url + path) as resp:
            assert resp.status == 200, (resp.status, await resp.text())
            return await resp.json()


async def eventually(check: Callable[[], Any]) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy; at most 10 s."""
    return await wait_until(check)


@contextlib.asynccontextmanager
async def running_crawl(
    serve: Any,
    spiders: list[type[Spider]],
    *,
    site: TreeSite | None = None,
    settings: dict[str, Any] | None = None,
    token: str | None = None,
) -> AsyncIterator[Running]:
    """Crawl ``site`` with ``spiders`` on one engine, the dashboard beside it; stops
    the crawl at the end of the block."""
    from skitter import run_crawlers

    site = site or TreeSite()
    base = await serve(site.app)
    crawlers = [
        Crawler(cls, {**CRAWL_SETTINGS, "BASE": base, **(settings or {})}) for cls in spiders
    ]
    task = asyncio.create_task(run_crawlers(crawlers))
    try:
        projects = [crawler.control for crawler in crawlers]
        async with Dashboard(projects, token=token) as dashboard, aiohttp.ClientSession() as http:
            await eventually(lambda: all(c.control.status == "running" for c in crawlers))
            yield Running(crawlers[0], site, dashboard, base, http, crawlers)
    finally:
        site.release_hang.set()
        for crawler in crawlers:
            crawler.stop("test over")
        await asyncio.wait_for(task, 10)


@pytest.fixture
def site() -> TreeSite:
    return TreeSite()


# -- a real browser (headless Chromium from the system packages) ---------------------------
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _unavailable(reason: str) -> None:
    message = f"BROWSER TESTS NOT RUN: {reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _unavailable("Playwright is missing: pip install playwright (no `playwright install`)")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            await chromium.close()


async def open_page(browser: Any, run: Running) -> tuple[Any, list[str]]:
    """The dashboard in a new page, and a list collecting its script errors."""
    page = await browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(8000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))

    def on_console(msg: Any) -> None:
        # Chromium logs every 4xx as an error; a refused rate change is one on purpose.
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            errors.append(f"console: {msg.text}")

    page.on("console", on_console)
    await page.goto(run.url)
    return page, errors


#: The screenshots the documentation's dashboard page shows, and where they go: with
#: ``SKITTER_DOCS_SCREENSHOTS=1`` the browser tests replace them (only then, so that an
#: ordinary run leaves the repository's images alone).
DOCS_SHOTS = frozenset({"overview", "rate-refused", "cluster-overview"})
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "topics" / "img"


async def screenshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}.png"), full_page=True)
    if name in DOCS_SHOTS and os.environ.get("SKITTER_DOCS_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(exist_ok=True)
        await page.screenshot(path=str(DOCS_IMAGES / f"dashboard-{name}.png"))
