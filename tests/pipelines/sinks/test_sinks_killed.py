"""Exactly once under SIGKILL: real crawl processes killed at random moments while they
write, started again, and the table checked by query: every expected item, once.

- Three ``skitter worker`` processes on a Redis frontier (its own ``redis-server``,
  with AOF) write to PostgreSQL; five times a random worker is SIGKILLed at a random
  moment and started again, and Redis itself is restarted once.
- A job-directory crawl writes to the embedded SQLite sink; it is SIGKILLed five times
  at random moments and resumed with the same command each time.

The SQLite sink waits up to 0.3 s to fill a batch (``batch_delay``), so a task's items
are committed well after its callback ended: had the job recorded the task done before
that, a kill in between would lose them (this test then finds them missing).
Items carry no declared key, so what is tested is the identity every item gets from
its task and its place in the callback's output: a task killed after its items were
committed but before its ack runs again, and its items land on the same rows.
The harness (processes, the site, random moments with the seed in every message) is
the one the frontier's kill tests use.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server

pytestmark = pytest.mark.slow

SRC = str(Path(__file__).resolve().parents[3] / "src")
PAGES = 400

SPIDER = """
from skitter import Request, Spider


class Tree(Spider):
    name = "tree"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n, "part": 1}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")
        yield {"n": n, "part": 2}
""".replace("PAGES", str(PAGES))
EXPECTED = {(n, part) for n in range(PAGES) for part in (1, 2)}


class Site:
    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.served = 0
        self.app = web.Application()
        self.app.router.add_get("/p/{n}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.latency)  # the site's own pace, so that the kills land mid-crawl
        self.served += 1
        return web.Response(text="<html>ok</html>", content_type="text/html")

    async def served_at_least(self, count: int) -> None:
        await wait_until(lambda: self.served >= count, timeout=60)


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(textwrap.dedent(SPIDER))
    return path


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer(aof=True, binary=require_redis_server()) as server:
        yield server


async def start(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *cmd, env={**os.environ, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def finish(proc: asyncio.subprocess.Process, seed: int) -> str:
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    text = out.decode()
    assert proc.returncode == 0, f"seed {seed}: {text[-3000:]}"
    return text


async def kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.communicate()


def check(rows: list[tuple[int, int]], seed: int) -> None:
    """Every expected item, none twice."""
    missing = EXPECTED - set(rows)
    assert not missing, f"seed {seed}: {len(missing)} items missing: {sorted(missing)[:10]}"
    assert len(rows) == len(EXPECTED), f"seed {seed}: {len(rows) - len(EXPECTED)} duplicates"


async def test_workers_killed_five_times_and_a_redis_restart_write_each_item_once(
    serve: Any, pg_uri: str, spider_file: Path, redis_server: RedisServer
) -> None:
    import psycopg

    site = Site(latency=0.2)  # 30 pages/s at most: the crawl outlasts the kills
    base = await serve(site.app)
    sinks = json.dumps({f"{pg_uri}?table=items": {"create": True, "batch_size": 50}})

    def worker() -> list[str]:
        return [
            sys.executable, "-m", "skitter", "worker", str(spider_file),
            "--redis", redis_server.url, "--job", "kill", "--no-progress",
            "-s", f"BASE={base}", "-s", f"SINKS={sinks}", "-s", "CONCURRENT_REQUESTS=2",
            "-s", "STATS_DUMP=false", "-s", "LEASE_SECONDS=3", "-s", "WORKER_IDLE_TIMEOUT=3",
        ]  # fmt: skip

    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    workers = [await start(worker()) for _ in range(3)]
    await site.served_at_least(20)
    for round_ in range(5):
        # real processes: a kill at a random point of their crawl
        await asyncio.sleep(rng.uniform(0.3, 1.5))
        victim = rng.randrange(3)
        await kill(workers[victim])
        workers[victim] = await start(worker())
        if round_ == 2:  # Redis restarts once, under all three
            redis_server.stop()
            await asyncio.sleep(2.0)  # a real redis-server down for a while, under the workers
            redis_server.start()
    assert site.served < PAGES, f"seed {seed}: the crawl ended before the last kill"
    for proc in workers:
        await finish(proc, seed)
    async with await psycopg.AsyncConnection.connect(pg_uri) as conn:
        cur = await conn.execute(b"SELECT (data->>'n')::int, (data->>'part')::int FROM items")
        rows = [(n, part) for n, part in await cur.fetchall()]
    check(rows, seed)


async def test_a_job_killed_five_times_and_resumed_writes_each_item_once_to_sqlite(
    serve: Any, tmp_path: Path, spider_file: Path
) -> None:
    site = Site(latency=0.1)
    base = await serve(site.app)
    command = [
        sys.executable, "-m", "skitter", "crawl", str(spider_file), "--job-dir",
        str(tmp_path / "job"), "--no-progress", "-s", f"BASE={base}",
        "-s", "SINKS=" + json.dumps({"sqlite:?table=items": {"batch_size": 20,
                                                              "batch_delay": 0.3}}),
        "-s", "CONCURRENT_REQUESTS=8", "-s", "STATS_DUMP=false",
    ]  # fmt: skip
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    kills = 0
    while kills < 5:
        proc = await start(command)
        await site.served_at_least(site.served + 5)  # crawling (and writing) again
        # a real process: a kill at a random point of its crawl
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        if proc.returncode is not None:
            break
        await kill(proc)
        kills += 1
    assert kills == 5, f"seed {seed}: the crawl ended after {kills} kills"
    text = await finish(await start(command), seed)
    assert "resuming" in text
    with sqlite3.connect(tmp_path / "job" / "items.sqlite3") as db:
        rows = db.execute(
            "SELECT json_extract(data, '$.n'), json_extract(data, '$.part') FROM items"
        ).fetchall()
    check([(n, part) for n, part in rows], seed)
