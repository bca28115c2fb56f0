"""Job directories end to end: stop a crawl (Ctrl-C, or SIGKILL at random moments), run
the same command again, and get exactly the full item set, with no completed page
fetched twice. The crawler runs as a real subprocess against a local server."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from aiohttp import web

SRC = str(Path(__file__).resolve().parents[2] / "src")
PAGES = 300

SPIDER = """
from skitter import Request, Spider


class Tree(Spider):
    name = "tree"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        self.state["seen"] = self.state.get("seen", 0) + 1
        yield {"n": n, "name": f"page {n}"}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")
""".replace("PAGES", str(PAGES))


class Site:
    """Pages of a binary tree; logs (time, page) of every response it finished."""

    def __init__(self) -> None:
        self.served: list[tuple[float, int]] = []
        self.running = asyncio.Event()  # set once a few pages were served
        self.app = web.Application()
        self.app.router.add_get("/p/{n}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        await asyncio.sleep(0.02)  # the site's own pace, so that the signal lands mid-crawl
        self.served.append((time.monotonic(), int(request.match_info["n"])))
        if len(self.served) >= 10:
            self.running.set()
        return web.Response(text="<html>ok</html>", content_type="text/html")


def command(tmp_path: Path, base: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "skitter", "crawl", str(tmp_path / "tree.py"),
        "-s", f"BASE={base}", "-s", "CONCURRENT_REQUESTS=4", "-s", "STATS_DUMP=false",
        "--job-dir", str(tmp_path / "job"), "-o", str(tmp_path / "items.jsonl"),
        "--no-progress", *extra,
    ]  # fmt: skip


async def start(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *cmd, env={**os.environ, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


def items(tmp_path: Path) -> list[int]:
    lines = (tmp_path / "items.jsonl").read_text().splitlines()
    return [json.loads(line)["n"] for line in lines]


def completed_in_job(tmp_path: Path) -> set[int]:
    """Pages whose task the job database holds as SUCCESS (its completion committed)."""
    path = tmp_path / "job" / "job.sqlite3"
    if not path.exists():  # killed while starting up
        return set()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT url FROM tasks WHERE state = 2").fetchall()
    return {int(url.rsplit("/", 1)[1]) for (url,) in rows}


async def test_ctrl_c_then_the_same_command_resumes(serve: Any, tmp_path: Path) -> None:
    (tmp_path / "tree.py").write_text(textwrap.dedent(SPIDER))
    site = Site()
    base = await serve(site.app)
    wait = random.Random().uniform(0.0, 0.6)
    proc = await start(command(tmp_path, base))
    await asyncio.wait_for(site.running.wait(), timeout=30)
    await asyncio.sleep(wait)  # a real process: the signal at a random point of its crawl
    proc.send_signal(signal.SIGINT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 0, out.decode()
    first = items(tmp_path)
    assert 0 < len(first) < PAGES, f"stopped {wait:.2f} s after the first pages"
    proc = await start(command(tmp_path, base, "--stats-json", str(tmp_path / "stats.json")))
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, out.decode()
    assert "resuming" in out.decode()
    assert sorted(items(tmp_path)) == list(range(PAGES))  # every item once, none lost
    served = [n for _, n in site.served]
    assert sorted(served) == list(range(PAGES))  # a clean stop: nothing fetched twice
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["item_scraped_count"] == PAGES  # the counts went on from the first run


async def test_sigkill_at_random_moments_loses_nothing(serve: Any, tmp_path: Path) -> None:
    (tmp_path / "tree.py").write_text(textwrap.dedent(SPIDER))
    site = Site()
    base = await serve(site.app)
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    kills: list[tuple[float, set[int]]] = []
    for _ in range(3):
        proc = await start(command(tmp_path, base))
        # a real process: a kill at a random point of its crawl
        await asyncio.sleep(rng.uniform(0.5, 1.5))
        if proc.returncode is not None:
            break
        proc.kill()
        await proc.wait()
        kills.append((time.monotonic(), completed_in_job(tmp_path)))
    proc = await start(command(tmp_path, base))
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, f"seed {seed}: {out.decode()}"
    assert set(items(tmp_path)) == set(range(PAGES)), f"seed {seed}"
    for killed_at, completed in kills:
        again = {n for t, n in site.served if t > killed_at and n in completed}
        assert not again, f"seed {seed}: completed pages fetched again: {sorted(again)}"


async def test_job_command_lists_failures_and_requeues_them(serve: Any, tmp_path: Path) -> None:
    (tmp_path / "tree.py").write_text(textwrap.dedent(SPIDER))
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n in (3, 4):
            return web.Response(status=500, text="broken")
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app.router.add_get("/p/{n}", page)
    base = await serve(app)
    proc = await start(command(tmp_path, base, "-s", "RETRY_TIMES=0"))
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, out.decode()
    show = [sys.executable, "-m", "skitter", "job", str(tmp_path / "job")]
    proc = await start(show)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=30)
    text = out.decode()
    assert proc.returncode == 0, text
    assert "HTTP 500" in text
    assert "/p/3" in text
    assert "/p/4" in text
    proc = await start([*show, "--retry-failed", "--reason", "HTTP 500"])
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert "2 failed tasks queued again" in out.decode()
    with sqlite3.connect(tmp_path / "job" / "job.sqlite3") as db:
        states = dict(db.execute("SELECT url, state FROM tasks").fetchall())
    assert states[f"{base}/p/3"] == 1  # ACTIVE again
