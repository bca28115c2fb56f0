"""Fixtures for the browser transport tests: a local site whose pages need JavaScript,
real headless Chromium (the system's, never a downloaded one), and a Downloader.

Without Chromium or Playwright these tests are skipped with a reason that says what to
install; under CI (``CI=true``) they fail instead, so a CI that lost its Chromium is red,
not silently green.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter._clock import Clock, FakeClock
from skitter.downloader import Downloader
from skitter.downloader.browser import browser_problem
from skitter.engine import Stats
from skitter.settings import Settings
from skitter.testing._server import serve_app

ITEM_COUNT = 3
FAST = {"DOWNLOAD_TIMEOUT": 10.0}


@pytest.fixture(scope="session")
def chromium() -> None:
    """Require Playwright and Chromium: skip loudly without them, fail under CI."""
    problem = browser_problem()
    if problem is None:
        return
    message = f"browser tests need Chromium and Playwright: {problem}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def chromium_pids() -> list[int]:
    """Main Chromium processes started by this test process (its descendants only)."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        commands[pid] = cmdline
    me = os.getpid()

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == me:
                return True
        return False

    return [
        pid
        for pid, cmd in commands.items()
        if "--remote-debugging-pipe" in cmd and "--type=" not in cmd and descends(pid)
    ]


def kill_chromium() -> int:
    """SIGKILL the Chromium this process started; how many were killed."""
    pids = chromium_pids()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return len(pids)


class JsSite:
    """Pages whose content exists only after their JavaScript runs, and counters of what
    the browser asked for."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.release = asyncio.Event()  # lets hanging handlers end when the test ends
        #: /hangs names /never.js while this is set: its load event never fires.
        self.hold_load = True
        self.on_slow_script: list[object] = []  # callables run when /slow.js is asked for
        self.app = web.Application()
        routes = self.app.router
        routes.add_get("/items", self.items)
        routes.add_get("/item/{n}", self.item)
        routes.add_get("/pixel.png", self.pixel)
        routes.add_get("/font.woff2", self.pixel)
        routes.add_get("/hangs", self.hangs)
        routes.add_get("/never.js", self.never)
        routes.add_get("/slow.js", self.slow_script)
        routes.add_get("/echo", self.echo)
        routes.add_get("/set-cookie", self.set_cookie)
        routes.add_get("/late", self.late)
        routes.add_get("/release", self.release_late)
        routes.add_get("/big-headers", self.big_headers)

    def _count(self, request: web.Request) -> None:
        self.hits[request.path] += 1

    async def items(self, request: web.Request) -> web.Response:
        """A list built by JavaScript after load, with an image the browser should skip."""
        self._count(request)
        script = (
            f"for (let n = 1; n <= {ITEM_COUNT}; n++) {{"
            "const a = document.createElement('a'); a.href = '/item/' + n;"
            "a.className = 'item'; a.textContent = 'Item ' + n;"
            "document.getElementById('list').appendChild(a); }"
        )
        return _html(
            '<div id="list"></div><img src="/pixel.png">'
            f"<script>window.addEventListener('load', () => {{ {script} }});</script>"
        )

    async def item(self, request: web.Request) -> web.Response:
        """One item page: its name is written by JavaScript; ``?slow=1`` loads /slow.js."""
        self._count(request)
        n = request.match_info["n"]
        slow = '<script src="/slow.js"></script>' if request.query.get("slow") else ""
        return _html(
            f"{slow}<h1></h1><script>document.querySelector('h1').textContent = "
            f"'Item ' + {int(n)};</script>"
        )

    async def pixel(self, request: web.Request) -> web.Response:
        self._count(request)
        return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")

    async def hangs(self, request: web.Request) -> web.Response:
        """Its script never arrives while ``hold_load`` is set: the test, not the count of
        visits, says which attempt hangs (a first attempt whose timeout fired before it
        reached the site, on a loaded machine, does not make the second one hang)."""
        self._count(request)
        script = '<script src="/never.js"></script>' if self.hold_load else ""
        return _html(f"{script}<p id='done'>loaded</p>")

    async def never(self, request: web.Request) -> web.Response:
        self._count(request)
        await self.release.wait()
        return web.Response(text="", content_type="application/javascript")

    async def slow_script(self, request: web.Request) -> web.Response:
        self._count(request)
        for action in self.on_slow_script:
            action()  # type: ignore[operator]
        return web.Response(text="", content_type="application/javascript")

    async def echo(self, request: web.Request) -> web.Response:
        """The request's headers and cookies, written into the page."""
        self._count(request)
        lines = "".join(f"<li data-name='{k.lower()}'>{v}</li>" for k, v in request.headers.items())
        cookies = "".join(f"<li data-cookie='{k}'>{v}</li>" for k, v in request.cookies.items())
        return _html(f"<ul id='headers'>{lines}</ul><ul id='cookies'>{cookies}</ul>")

    async def set_cookie(self, request: web.Request) -> web.Response:
        """A cookie from the server and one from JavaScript."""
        self._count(request)
        response = _html("<script>document.cookie = 'js=from-script; path=/';</script>")
        response.set_cookie("server", "from-header")
        return response

    async def late(self, request: web.Request) -> web.Response:
        """Content that appears only after the load event, once ``/release`` answers:
        with ``?held=1`` it never does, so a test of the page as loaded does not race
        the script."""
        self._count(request)
        return _html(
            "<script>window.addEventListener('load', () => fetch('/release' + location.search)"
            ".then(() => { const p = document.createElement('p'); p.id = 'late';"
            " p.textContent = 'here'; document.body.appendChild(p); }));</script>"
        )

    async def release_late(self, request: web.Request) -> web.Response:
        """Answers at once, or for ``?held=1`` only when the test ends."""
        if request.query.get("held"):
            await self.release.wait()
        return web.Response(text="go")

    async def big_headers(self, request: web.Request) -> web.Response:
        """``?lines=N&size=S``: a page with N extra headers of S bytes each."""
        self._count(request)
        lines, size = int(request.query["lines"]), int(request.query["size"])
        response = _html("<p>big headers</p>")
        for i in range(lines):
            response.headers[f"X-Big-{i}"] = "v" * size
        return response


def _html(body: str) -> web.Response:
    return web.Response(
        text=f"<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>",
        content_type="text/html",
    )


@pytest.fixture
async def site(chromium: None) -> AsyncIterator[tuple[JsSite, str]]:
    """The JavaScript site, served on 127.0.0.1: ``(site, base_url)``."""
    js_site = JsSite()
    async with serve_app(js_site.app) as base_url:
        try:
            yield js_site, base_url
        finally:
            js_site.release.set()


@dataclass
class Context:
    """Satisfies ``CrawlContext`` for a Downloader built without a Crawler."""

    settings: Settings
    spider: Any = None
    stats: Stats = field(default_factory=Stats)
    clock: Clock = field(default_factory=FakeClock)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("skitter.test"))


@pytest.fixture
async def downloader() -> AsyncIterator[Any]:
    """``await downloader(settings, spider) -> Downloader`` with the built-in middlewares."""
    opened: list[Downloader] = []

    async def make(settings: dict[str, Any] | None = None, spider: Any = None) -> Downloader:
        context = Context(Settings({**FAST, **(settings or {})}), spider)
        made = Downloader(context, spider)
        opened.append(made)
        await made.open()
        return made

    yield make
    for made in opened:
        await made.close()
