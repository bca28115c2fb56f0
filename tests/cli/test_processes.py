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
import re
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from skitter.testing import wait_until
from skitter.testing._server import serve_app

from .conftest import cli_env

PAGES = 60  # per host
TOKEN = "dashboard-token-of-the-test"


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
    """The crawl's exit code and output; a crawl still running after 90 s is killed and
    the test fails with what it printed, so a hang says where it hung."""
    talking = asyncio.ensure_future(proc.communicate())
    done, _ = await asyncio.wait({talking}, timeout=90)
    if not done:
        proc.kill()
        out, err = await talking
        pytest.fail(f"still running after 90 s; its output:\n{out.decode()}{err.decode()}")
    out, err = talking.result()
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
    # How long the slower worker took from its spawn to its first lease: start-up cost.
    start = re.search(r"multiproc/worker_start_seconds\W+([0-9.]+)", output)
    assert start is not None, output
    assert float(start[1]) > 0


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


#: Worker 1 loads the spider only once the test creates ``go`` (in the crawl's directory).
LATE_WORKER = """
import pathlib
import sys
import time

if "--worker-index" in sys.argv and sys.argv[sys.argv.index("--worker-index") + 1] == "1":
    while not pathlib.Path("go").exists():
        time.sleep(0.01)  # polled: the test decides when worker 1 starts
"""


async def test_a_worker_that_starts_after_ctrl_c_stops_too(tmp_path: Path, site: Site) -> None:
    """A worker told to stop while still starting (it connects after Ctrl-C) stops as
    soon as its crawl starts: it neither crawls on nor waits for start requests that the
    stopped worker 0 will never feed, and the crawl ends."""
    spider = _spider(tmp_path, site)
    spider.write_text(LATE_WORKER + spider.read_text())
    proc = await _start(tmp_path, str(spider), "-o", "items.jsonl", "--processes", "2")
    try:
        await wait_until(lambda: len(_workers(proc.pid)) == 2, timeout=60)
        proc.send_signal(signal.SIGINT)
        await wait_until(lambda: len(_workers(proc.pid)) == 1, timeout=60)  # worker 0 ended
    except TimeoutError:
        for pid in [*_workers(proc.pid), proc.pid]:  # worker 1 waits for ``go``: not alone
            os.kill(pid, signal.SIGKILL)
        raise
    (tmp_path / "go").touch()
    code, output = await _finish(proc)
    assert code == 0, output
    assert output.count("Closing spider tree (shutdown)") == 2, output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["crawl", "tree.py", "--processes", "0"], "1 or more"),
        (["crawl", "tree.py", "--processes", "-2"], "1 or more"),
        (["crawl", "tree.py", "--processes", "many"], "'auto'"),
        (["worker", "tree.py", "--job", "j", "--processes", "2"], "skitter worker"),
        (["crawl", "tree.py", "--processes", "2", "-s", "SINKS=sqlite:items.db"], "SINKS"),
        (["crawl", "tree.py", "--processes", "2", "-s", "CLOSESPIDER_PAGECOUNT=5"], "PAGECOUNT"),
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


ITEMS_SPIDER = """
import dataclasses
import datetime

import skitter


class Page(skitter.Item):
    url = skitter.Field()
    depth = skitter.Field(serializer=lambda value: f"#{{value}}")


@dataclasses.dataclass
class Seen:
    url: str
    on: datetime.date


class Tree(skitter.Spider):
    name = "tree"
    custom_settings = {{
        "DOWNLOAD_SLOT_BY": "netloc",
        "ROBOTSTXT_OBEY": False,
        "FEEDS": {{
            "pages.jsonl": {{"format": "jsonlines", "item_classes": [Page]}},
            "seen.jsonl": {{"format": "jsonlines", "item_classes": [Seen, dict]}},
        }},
    }}

    async def start(self):
        yield {{"from": "start()"}}
        for url in {urls!r}:
            yield skitter.Request(url)

    def parse(self, response):
        yield Page(url=response.url, depth=response.url.count("/"))
        yield Seen(response.url, datetime.date(2026, 12, 3))
        yield from response.follow_all(css="a")
"""


async def test_the_feeds_get_the_items_a_one_process_crawl_writes(
    tmp_path: Path, site: Site
) -> None:
    """Item classes (``item_classes`` filters, field serializers, a date) and a start()
    item: the feeds of ``--processes 2`` hold what those of one process hold."""
    feeds: list[dict[str, list[str]]] = []
    for run, extra in (("one", []), ("two", ["--processes", "2"])):
        where = tmp_path / run
        where.mkdir()
        (where / "tree.py").write_text(ITEMS_SPIDER.format(urls=site.urls))
        code, output = await _finish(await _start(where, "tree.py", *extra))
        assert code == 0, output
        assert "cannot be pickled" not in output
        feeds.append(
            {
                name: sorted((where / name).read_text().splitlines())
                for name in ("pages.jsonl", "seen.jsonl")
            }
        )
    one, two = feeds
    assert two == one
    assert len(one["pages.jsonl"]) == 2 * PAGES
    assert '"depth":"#4"' in one["pages.jsonl"][0]
    assert one["seen.jsonl"].count('{"from":"start()"}') == 1
    assert len(one["seen.jsonl"]) == 2 * PAGES + 1


async def test_the_dashboard_shows_and_pauses_the_whole_crawl(tmp_path: Path, site: Site) -> None:
    """Caught mid-crawl, the dashboard's figures are the server's (both workers' tasks),
    and a pause from it stops both workers dispatching."""
    site.hold_after = PAGES // 2
    spider = _spider(tmp_path, site)
    args = (str(spider), "-o", "items.jsonl", "--processes", "2", "--ui", "--ui-token", TOKEN)
    proc = await _start(tmp_path, *args)
    assert proc.stderr is not None
    line = ""
    async with asyncio.timeout(60):
        while "Dashboard: " not in line:  # the console's line, on stderr
            line = (await proc.stderr.readline()).decode()
    api = line.split("Dashboard: ")[1].split()[0] + "api/projects/tree"
    await asyncio.wait_for(site.held.wait(), timeout=60)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as http:

        async def row() -> dict[str, object]:
            async with http.get(api) as response:
                assert response.status == 200, await response.text()
                return dict(await response.json())

        async def as_served() -> dict[str, object] | None:
            """The summary once it shows what the server saw: every request held is a
            task in flight, every one answered an item; both workers reporting."""
            now = await row()
            held = sum(site.in_flight.values())
            tasks = now["tasks"]
            assert isinstance(tasks, dict)
            done = now["workers"] == 2 and held > 1 and tasks["in_flight"] == held
            answered = sum(site.hits.values()) - held
            return now if done and now["items"] == answered else None

        await wait_until(as_served, timeout=30)
        async with http.post(api + "/pause") as response:
            assert response.status == 200, await response.text()
        assert (await row())["status"] == "paused"
        hits = sum(site.hits.values())
        site.release.set()  # what was held finishes; nothing new may start

        async def drained() -> bool:
            tasks = (await row())["tasks"]
            assert isinstance(tasks, dict)
            return tasks["in_flight"] == 0 and tasks["waiting"] + tasks["leased"] > 0

        await wait_until(drained, timeout=30)
        assert sum(site.hits.values()) == hits
        async with http.post(api + "/resume") as response:
            assert response.status == 200, await response.text()
    code, output = await _finish(proc)
    assert code == 0, output
    assert set(site.hits.values()) == {1}
    assert _urls(_items(tmp_path / "items.jsonl")) == _every_page(site)
