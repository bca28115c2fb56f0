"""``skitter crawl --processes N``: real processes against a real site on 127.0.0.1.

The site is a tree per port (page i links to 2i+1 and 2i+2), so every page is linked
from exactly one other and a crawl fetches each exactly once. The server counts what it
serves; a test that needs the crawl caught mid-way holds the responses (an event) until
it has done what it came to do (kill a worker, press Ctrl-C).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from skitter.testing._server import serve_app

from .conftest import cli_env

PAGES = 60  # per host


@dataclass
class Site:
    hits: Counter[str] = field(default_factory=Counter)
    in_flight: Counter[str] = field(default_factory=Counter)
    max_in_flight: Counter[str] = field(default_factory=Counter)
    #: Responses wait for it once ``hold_after`` pages have been served.
    release: asyncio.Event = field(default_factory=asyncio.Event)
    hold_after: int | None = None
    held: asyncio.Event = field(default_factory=asyncio.Event)
    urls: list[str] = field(default_factory=list)

    async def page(self, request: web.Request) -> web.Response:
        host = request.host
        i = int(request.match_info["i"])
        self.hits[f"{host}/{i}"] += 1
        self.in_flight[host] += 1
        self.max_in_flight[host] = max(self.max_in_flight[host], self.in_flight[host])
        try:
            await asyncio.sleep(0.01)  # overlap, so that a concurrency limit shows
            if self.hold_after is not None and sum(self.hits.values()) > self.hold_after:
                self.held.set()
                await self.release.wait()
        finally:
            self.in_flight[host] -= 1
        links = "".join(f'<a href="/p/{j}">{j}</a>' for j in (2 * i + 1, 2 * i + 2) if j < PAGES)
        return web.Response(text=f"<h1>{i}</h1>{links}", content_type="text/html")


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()
    app = web.Application()
    app.router.add_get("/p/{i}", state.page)
    async with serve_app(app) as one, serve_app(app) as two:
        state.urls = [f"{one}/p/0", f"{two}/p/0"]
        yield state


SPIDER = """
import skitter

class Tree(skitter.Spider):
    name = "tree"
    start_urls = {urls!r}
    custom_settings = {{"DOWNLOAD_SLOT_BY": "netloc", "ROBOTSTXT_OBEY": False, **{extra!r}}}

    def parse(self, response):
        yield {{"url": response.url}}
        yield from response.follow_all(css="a")
"""


def _spider(tmp_path: Path, site: Site, **extra: object) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(SPIDER.format(urls=site.urls, extra=extra))
    return path


async def _start(tmp_path: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "crawl",
        *args,
        "--no-progress",
        cwd=tmp_path,
        env=cli_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return proc.returncode, out.decode() + err.decode()


def _items(feed: Path) -> Counter[str]:
    return Counter(json.loads(line)["url"] for line in feed.read_text().splitlines())


def _every_page(site: Site) -> set[str]:
    return {f"{url.split('/')[2]}/p/{i}" for url in site.urls for i in range(PAGES)}


def _workers(coordinator: int) -> list[int]:
    """The live worker processes of a coordinator (its children)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == coordinator:
                found.append(int(entry))
    return found


def _urls(counter: Counter[str]) -> set[str]:
    return {url.split("//", 1)[1] for url in counter}


async def test_two_processes_fetch_every_page_once_and_feed_every_item_once(
    tmp_path: Path, site: Site
) -> None:
    spider = _spider(tmp_path, site)
    proc = await _start(tmp_path, str(spider), "-o", "items.jsonl", "--processes", "2")
    code, output = await _finish(proc)
    assert code == 0, output
    assert set(site.hits.values()) == {1}
    assert len(site.hits) == 2 * PAGES
    items = _items(tmp_path / "items.jsonl")
    assert set(items.values()) == {1}
    assert _urls(items) == _every_page(site)
    assert "multiproc/processes" in output


async def test_a_worker_killed_mid_crawl_the_crawl_finishes_with_every_item_once(
    tmp_path: Path, site: Site
) -> None:
    site.hold_after = PAGES // 2
    spider = _spider(tmp_path, site)
    proc = await _start(tmp_path, str(spider), "-o", "items.jsonl", "--processes", "2")
    await asyncio.wait_for(site.held.wait(), timeout=60)
    workers = _workers(proc.pid)
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)  # it holds leases, maybe items not acked yet
    site.release.set()
    code, output = await _finish(proc)
    assert code == 0, output
    items = _items(tmp_path / "items.jsonl")
    assert set(items.values()) == {1}, output
    assert _urls(items) == _every_page(site)
    assert "ended without finishing" in output


async def test_per_slot_concurrency_holds_across_two_processes(tmp_path: Path, site: Site) -> None:
    spider = _spider(tmp_path, site, CONCURRENT_REQUESTS_PER_DOMAIN=2, CONCURRENT_REQUESTS=16)
    proc = await _start(tmp_path, str(spider), "-o", "items.jsonl", "--processes", "2")
    code, output = await _finish(proc)
    assert code == 0, output
    assert len(site.max_in_flight) == 2
    assert max(site.max_in_flight.values()) <= 2, site.max_in_flight
    assert len(_items(tmp_path / "items.jsonl")) == 2 * PAGES


async def test_ctrl_c_then_resume_with_the_job_dir(tmp_path: Path, site: Site) -> None:
    site.hold_after = PAGES // 2
    spider = _spider(tmp_path, site)
    args = (str(spider), "-o", "items.jsonl", "--processes", "2", "--job-dir", "job")
    proc = await _start(tmp_path, *args)
    await asyncio.wait_for(site.held.wait(), timeout=60)
    proc.send_signal(signal.SIGINT)
    site.release.set()
    code, output = await _finish(proc)
    assert code == 0, output
    first = _items(tmp_path / "items.jsonl")
    assert 0 < len(first) < 2 * PAGES, output
    site.hold_after = None
    code, output = await _finish(await _start(tmp_path, *args))
    assert code == 0, output
    items = _items(tmp_path / "items.jsonl")
    assert set(items.values()) == {1}, output
    assert _urls(items) == _every_page(site)
    assert set(site.hits.values()) == {1}  # nothing fetched twice across the two runs


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["crawl", "tree.py", "--processes", "0"], "1 or more"),
        (["crawl", "tree.py", "--processes", "-2"], "1 or more"),
        (["crawl", "tree.py", "--processes", "many"], "'auto'"),
        (["crawl", "tree.py", "--processes", "2", "--ui"], "--ui"),
        (["worker", "tree.py", "--job", "j", "--processes", "2"], "skitter worker"),
    ],
)
async def test_refusals(tmp_path: Path, site: Site, args: list[str], says: str) -> None:
    _spider(tmp_path, site)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        *args,
        cwd=tmp_path,
        env=cli_env({"SKITTER_REDIS_URL": "redis://127.0.0.1:1/0"}),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    code, output = await _finish(proc)
    assert code == 2, output
    assert says in output
    assert not site.hits
