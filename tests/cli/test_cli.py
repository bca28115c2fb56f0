"""The ``skitter`` command against a local server: what a process alone shows (signals,
the service, ``python -m skitter`` itself) as a real subprocess, the rest in this
process (``cli``: no interpreter start-up per command)."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter.testing import wait_until

from .conftest import Cli

SRC = str(Path(__file__).resolve().parents[2] / "src")

SPIDERS = """
from skitter import Spider


class Catalogue(Spider):
    name = "catalogue"
    category = "all"

    def start_requests(self):
        from skitter import Request
        yield Request(self.settings["BASE"] + "/0", dont_filter=True)

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n, "category": self.category, "name": f"item {n}"}
        yield from response.follow_all(css="a")


class Other(Catalogue):
    name = "other"
"""


HITS = web.AppKey("hits", list)


def site(pages: int, delay: float = 0.0) -> web.Application:
    """``pages`` linked pages; ``app[HITS]`` counts the requests, so a test can wait for
    the crawl to be running (a loaded machine may take seconds to start Python)."""

    async def handle(request: web.Request) -> web.Response:
        request.app[HITS].append(1)
        n = int(request.match_info["n"])
        if delay:
            await asyncio.sleep(delay)  # the site's own pace, so that the signals land mid-crawl
        nxt = "".join(f'<a href="/{m}">{m}</a>' for m in (n + 1, n + 2) if m < pages)
        return web.Response(text=f"<html>{nxt}</html>", content_type="text/html")

    app = web.Application()
    app[HITS] = []
    app.router.add_get("/{n}", handle)
    return app


async def hits_reach(app: web.Application, count: int) -> None:
    """Wait until the site has answered ``count`` requests (the crawl is under way)."""
    await wait_until(lambda: len(app[HITS]) >= count, timeout=40)


async def run_cli(
    *args: str,
    cwd: Path,
    signals: list[float] | None = None,
    env: dict[str, str] | None = None,
    running: web.Application | None = None,
) -> tuple[int, str]:
    """Run ``skitter ARGS``; with ``running``, the signals' delays count from the site's
    first request, not from the process start."""
    env = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        *args,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    if running is not None and signals:
        await hits_reach(running, 1)
    said = b""
    for n, wait in enumerate(signals or []):
        if n:  # the one before was handled: two signals close together may arrive as one
            said += await said_at_last(proc, b"shutting down gracefully")
        await asyncio.sleep(wait)  # a real process: the signal at a given point of its crawl
        proc.send_signal(signal.SIGINT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=45)
    assert proc.returncode is not None
    return proc.returncode, (said + out).decode()


async def said_at_last(proc: asyncio.subprocess.Process, words: bytes) -> bytes:
    """The process's output up to and with the line that holds ``words``."""
    assert proc.stdout is not None
    said = b""
    async with asyncio.timeout(40):  # a safety net: it logs it as it takes the signal
        while words not in said:
            line = await proc.stdout.readline()
            assert line, said.decode()  # it exited without saying it
            said += line
    return said


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "spiders.py"
    path.write_text(textwrap.dedent(SPIDERS))
    return path


@pytest.mark.parametrize("ext", ["jsonl", "json", "csv"])
async def test_crawl_writes_each_feed_format(
    serve: Any, cli: Cli, tmp_path: Path, spider_file: Path, ext: str
) -> None:
    base = await serve(site(30))
    code, out, _ = await cli(
        "crawl",
        f"{spider_file}:Catalogue",
        "-O",
        f"items.{ext}",
        "-s",
        f"BASE={base}",
        "-a",
        "category=books",
        "--stats-json",
        "stats.json",
    )
    assert code == 0, out
    path = tmp_path / f"items.{ext}"
    if ext == "jsonl":
        items = [json.loads(line) for line in path.read_text().splitlines()]
    elif ext == "json":
        items = json.loads(path.read_text())
    else:
        with path.open() as f:
            items = list(csv.DictReader(f))
    assert sorted(int(i["n"]) for i in items) == list(range(30))
    assert {i["category"] for i in items} == {"books"}
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["item_scraped_count"] == 30
    assert stats["finish_reason"] == "finished"


async def test_the_cli_reads_skitter_settings_from_the_environment(
    serve: Any, cli: Cli, tmp_path: Path, spider_file: Path
) -> None:
    """``SKITTER_<NAME>`` is a setting under the CLI (a library Crawler ignores it:
    tests/settings/test_settings.py), below ``-s`` and above the spider's custom_settings."""
    base = await serve(site(30))
    env = {"SKITTER_CLOSESPIDER_ITEMCOUNT": "3", "SKITTER_CONCURRENT_REQUESTS": "1"}
    args = ("crawl", f"{spider_file}:Catalogue", "-s", f"BASE={base}", "--stats-json")
    code, out, err = await cli(*args, "env.json", env=env)
    assert code == 0, out + err
    stats = json.loads((tmp_path / "env.json").read_text())
    assert stats["finish_reason"] == "closespider_itemcount"
    assert stats["item_scraped_count"] == 3
    code, out, err = await cli(*args, "cli.json", "-s", "CLOSESPIDER_ITEMCOUNT=0", env=env)
    assert code == 0, out + err
    assert json.loads((tmp_path / "cli.json").read_text())["item_scraped_count"] == 30


async def test_ambiguous_file_and_unknown_spider_are_usage_errors(
    cli: Cli, tmp_path: Path, spider_file: Path
) -> None:
    run = await cli("crawl", str(spider_file))
    assert run.code == 2 and "several spiders" in run.err
    run = await cli("crawl", f"{spider_file}:Nope")
    assert run.code == 2 and "no spider 'Nope'" in run.err
    run = await cli("crawl", str(tmp_path / "missing.py"))
    assert run.code == 2 and "no such spider file" in run.err
    run = await cli("crawl", f"{spider_file}:other", "-s", "CONCURENT_REQUESTS=2")
    assert run.code == 2 and "did you mean" in run.err
    run = await cli("crawl", f"{spider_file}:other", "-s", "ASYNCIO_EVENT_LOOP=trio")
    assert run.code == 2 and "ASYNCIO_EVENT_LOOP must be one of" in run.err


async def test_version() -> None:
    """``python -m skitter`` itself, as a process: its entry point and exit status."""
    code, out = await run_cli("--version", cwd=Path.cwd())
    assert code == 0 and out.startswith("skitter ")


async def test_first_sigint_stops_gracefully_with_a_valid_feed(
    serve: Any, tmp_path: Path, spider_file: Path
) -> None:
    app = site(10_000, delay=0.05)
    base = await serve(app)
    code, out = await run_cli(
        "crawl",
        f"{spider_file}:Catalogue",
        "-O",
        "items.json",
        "-s",
        f"BASE={base}",
        "-s",
        "CONCURRENT_REQUESTS=4",
        "--stats-json",
        "stats.json",
        cwd=tmp_path,
        signals=[1.0],
        running=app,
    )
    assert code == 0, out
    assert "shutting down gracefully" in out
    items = json.loads((tmp_path / "items.json").read_text())
    assert 0 < len(items) < 10_000
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["finish_reason"] == "shutdown"
    assert stats["item_scraped_count"] == len(items)


async def test_second_sigint_stops_at_once_with_a_valid_feed(
    serve: Any, tmp_path: Path, spider_file: Path
) -> None:
    # Pages that take far longer than the test: the in-flight ones can only end by force.
    app = site(10_000, delay=20)
    base = await serve(app)
    code, out = await run_cli(
        "crawl",
        f"{spider_file}:Catalogue",
        "-O",
        "items.json",
        "-s",
        f"BASE={base}",
        "-s",
        "SHUTDOWN_TIMEOUT=30",
        cwd=tmp_path,
        signals=[0.5, 0.1],
        running=app,
    )
    assert code == 130, out
    items = json.loads((tmp_path / "items.json").read_text())
    assert isinstance(items, list)


SERVICE = """
from skitter import Request, Spider, every


class Ticker(Spider):
    name = "ticker"

    @every(seconds=0.3)
    def tick(self):
        yield Request(self.settings["BASE"] + "/0", dont_filter=True)

    def parse(self, response):
        yield {"n": 0}
"""


async def test_serve_runs_periodic_callbacks_until_sigterm(serve: Any, tmp_path: Path) -> None:
    app = site(1)
    base = await serve(app)
    spiders = tmp_path / "spiders"
    spiders.mkdir()
    (spiders / "ticker.py").write_text(textwrap.dedent(SERVICE))
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "serve",
        str(spiders),
        "-s",
        f"BASE={base}",
        "-O",
        "items.jsonl",
        "--stats-json",
        "stats.json",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    await hits_reach(app, 6)  # ticks every 0.3 s: the service is running
    assert proc.returncode is None  # still serving though idle between ticks
    proc.send_signal(signal.SIGTERM)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 0, out.decode()
    items = (tmp_path / "items.jsonl").read_text().splitlines()
    assert len(items) >= 4
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["finish_reason"] == "shutdown"
    assert stats["engine/periodic_runs"] >= 4


async def test_crawl_a_directory_runs_its_spiders_side_by_side(
    serve: Any, cli: Cli, tmp_path: Path, spider_file: Path
) -> None:
    base = await serve(site(20))
    spiders = tmp_path / "many"
    spiders.mkdir()
    (spiders / "a.py").write_text(textwrap.dedent(SPIDERS.split("class Other")[0]))
    (spiders / "b.py").write_text(
        "from skitter import Spider\n\n\nclass Second(Spider):\n    name = 'second'\n"
    )
    run = await cli("crawl", str(spiders), "-O", "out-{name}.jsonl", "-s", f"BASE={base}")
    assert run.code == 0, run.err
    assert len((tmp_path / "out-catalogue.jsonl").read_text().splitlines()) == 20
    assert (tmp_path / "out-second.jsonl").read_text() == ""
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith("out-")) == [
        "out-catalogue.jsonl",
        "out-second.jsonl",
    ]
    run = await cli("crawl", str(spiders), "-O", "same.jsonl")
    assert run.code == 2 and "{name}" in run.err


async def test_runspider_runs_a_file_as_scrapy_runspider_does(
    serve: Any, cli: Cli, tmp_path: Path, spider_file: Path
) -> None:
    """``scrapy runspider FILE -o ...`` is what Scrapy users type daily: the same words
    work, with crawl's options; anything but a Python file is refused, saying why."""
    base = await serve(site(5))
    args = ("-O", "items.jsonl", "-s", f"BASE={base}", "-a", "category=books")
    run = await cli("runspider", f"{spider_file.name}:Catalogue", *args)
    assert run.code == 0, run.err
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert sorted(i["n"] for i in items) == list(range(5))
    assert {i["category"] for i in items} == {"books"}
    run = await cli("runspider", "catalogue")
    assert run.code == 2 and "takes a spider file" in run.err, run
    assert "skitter crawl NAME" in run.err, run
    run = await cli("runspider", "missing.py")
    assert run.code == 2 and "no such spider file: missing.py" in run.err, run
    run = await cli("runspider", spider_file.name)
    assert run.code == 2 and "several spiders" in run.err, run
