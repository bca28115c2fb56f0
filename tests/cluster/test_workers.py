"""Workers end to end: real ``skitter worker`` processes sharing a real redis-server,
crawling a local site. One is SIGKILLed and restarted, Redis itself is stopped and
started again, the project's rate holds across workers, and pushed URLs reach waiting
workers."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from test_cluster_rate import arrivals_site, steps, virtual_worker

from skitter.redis import JobKeys
from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server

SRC = str(Path(__file__).resolve().parents[2] / "src")
PAGES = 300

SPIDER = """
from skitter import Request, Spider


class Tree(Spider):
    name = "tree"

    def start_requests(self):
        if self.settings.get("BASE"):
            yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")
""".replace("PAGES", str(PAGES))


class Site:
    def __init__(self, latency: float = 0.02) -> None:
        self.latency = latency
        self.served: list[tuple[float, int]] = []
        self.app = web.Application()
        self.app.router.add_get("/p/{n}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        await asyncio.sleep(self.latency)  # the site's own pace, so that the kills land mid-crawl
        self.served.append((time.monotonic(), int(request.match_info["n"])))
        return web.Response(text="<html>ok</html>", content_type="text/html")


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer(aof=True, binary=require_redis_server()) as server:
        yield server


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(textwrap.dedent(SPIDER))
    return path


def worker(
    spider_file: Path, redis_url: str, out: Path, base: str | None, *settings: str
) -> list[str]:
    cmd = [
        sys.executable, "-m", "skitter", "worker", str(spider_file), "--redis", redis_url,
        "--job", "test", "-o", str(out), "--no-progress",
        "-s", "CONCURRENT_REQUESTS=4", "-s", "STATS_DUMP=false", "-s", "LEASE_SECONDS=3",
        "-s", "WORKER_IDLE_TIMEOUT=2",
    ]  # fmt: skip
    if base:
        cmd += ["-s", f"BASE={base}"]
    for setting in settings:
        cmd += ["-s", setting]
    return cmd


async def start(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *cmd, env={**os.environ, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def until_said(
    procs: list[asyncio.subprocess.Process], words: str, within: float = 60
) -> list[str]:
    """Reads the processes' output until one of them says ``words`` (the event a test
    waits for, not a duration); what each said so far, to put before ``finish``'s."""
    said = [""] * len(procs)

    async def read(i: int, stream: asyncio.StreamReader) -> bool:
        while line := await stream.readline():
            said[i] += line.decode()
            if words in " ".join(said[i].split()):  # rich may wrap a long line
                return True
        return False  # it exited without saying it

    readers = {asyncio.create_task(read(i, p.stdout)) for i, p in enumerate(procs) if p.stdout}
    heard = False
    try:
        async with asyncio.timeout(within):  # a safety net
            while readers and not heard:
                done, readers = await asyncio.wait(readers, return_when=asyncio.FIRST_COMPLETED)
                heard = any(task.result() for task in done)
    finally:
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    assert heard, (words, said)
    return said


async def finish(proc: asyncio.subprocess.Process) -> str:
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=90)
    text = out.decode()
    assert proc.returncode == 0, text
    return text


# ``skitter push``, started before it is needed: it imports meanwhile, then pushes once
# told (a line on its stdin), so that the push reaches a waiting worker well within its
# WORKER_IDLE_TIMEOUT however slowly interpreters start on a loaded machine.
PUSH_WHEN_TOLD = (
    "import sys, skitter.cli._main, skitter.cli._push; from skitter.cli import main; "
    "sys.stdin.readline(); sys.exit(main(sys.argv[1:]))"
)


async def start_push(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", PUSH_WHEN_TOLD, "push", *args, env={**os.environ, "PYTHONPATH": SRC},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def push_once_created(
    push: asyncio.subprocess.Process, redis: RedisServer, spider: str
) -> str:
    """Tell ``push`` to go once a worker has created job 'test' of ``spider`` (its epoch
    is in Redis; a push before that is refused, as it should be); its output."""
    meta = JobKeys.for_job(spider, "test").meta
    async with asyncio.timeout(60):  # a safety net: a worker creates the job as it starts
        while redis.command("HEXISTS", meta, "epoch") != b":1":  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # polls a real process (redis-server)
    assert push.stdin is not None
    push.stdin.write(b"go\n")
    return await finish(push)


async def run_workers(
    spider_file: Path, redis_url: str, outs: list[Path], base: str, *settings: str
) -> None:
    """One worker per output file, all on one job; returns when every one exited 0."""
    procs = [await start(worker(spider_file, redis_url, out, base, *settings)) for out in outs]
    for proc in procs:
        await finish(proc)


def items(files: list[Path]) -> list[int]:
    found = []
    for path in files:
        if path.exists():
            found += [json.loads(line)["n"] for line in path.read_text().splitlines() if line]
    return found


async def test_a_worker_killed_three_times_loses_nothing(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site(latency=0.03)
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(3)]
    steady = [await start(worker(spider_file, redis_server.url, outs[i], base)) for i in (0, 1)]
    victim_files = []
    for round_ in range(3):
        out = tmp_path / f"victim{round_}.jsonl"
        victim_files.append(out)
        victim = await start(worker(spider_file, redis_server.url, out, base))
        await asyncio.sleep(0.8)  # a real process: killed some way into its crawl
        victim.kill()
        await victim.wait()
    last = tmp_path / "victim-last.jsonl"
    victim_files.append(last)
    restarted = await start(worker(spider_file, redis_server.url, last, base))
    for proc in [*steady, restarted]:
        await finish(proc)
    got = items(outs[:2] + victim_files)
    assert set(got) == set(range(PAGES))  # every item, from some worker
    assert len(got) - len(set(got)) <= 3 * 4  # at most the victim's in-flight, each time


#: How long Redis is down in the test below, in real seconds.
DOWN = 2.5


async def test_redis_stopped_for_seconds_mid_crawl(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site(latency=0.03)
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    procs = [await start(worker(spider_file, redis_server.url, out, base)) for out in outs]
    await wait_until(lambda: len(site.served) >= 10, timeout=30)  # both joined, crawling
    redis_server.stop()
    stopped_at = time.monotonic()
    # A real redis-server down under the workers: long enough for both to notice and
    # pause (the window below), not so long that the suite waits on it for nothing.
    await asyncio.sleep(DOWN)
    redis_server.start()
    texts = [await finish(proc) for proc in procs]
    assert set(items(outs)) == set(range(PAGES))
    assert any("Task store unavailable" in text for text in texts)
    served_while_down = [n for t, n in site.served if stopped_at + 1.0 < t < stopped_at + DOWN]
    # Dispatch paused (only in-flight ones ended): a running crawl of this site serves
    # its ~290 other pages in well under the window's 1.5 s.
    assert len(served_while_down) < 10


@pytest.mark.virtual_time
async def test_the_projects_rate_holds_across_workers(serve: Any, redis_url: str) -> None:
    app, arrivals = arrivals_site()
    base = await serve(app)
    limited = {"RATE": 4, "BURST": 1, "CLOSESPIDER_TIMEOUT": 5.9}
    workers = [virtual_worker(redis_url, base, **limited) for _ in range(2)]
    stats = await asyncio.gather(*(worker.run() for worker in workers))
    assert all(s["response_received_count"] > 0 for s in stats)  # both crawled
    # 4/s for the two together, not 8/s: one token every 0.25 s, until the timeout.
    assert arrivals == steps(0.0, 0.25, 24)


async def test_pushed_urls_reach_waiting_workers(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site()
    base = await serve(site.app)
    out = tmp_path / "w.jsonl"
    push = await start_push(
        f"{base}/p/1", f"{base}/p/2", "--redis", redis_server.url, "--job", "test",
        "--spider", "tree",
    )  # fmt: skip
    waiting = await start(worker(spider_file, redis_server.url, out, None, "WORKER_IDLE_TIMEOUT=4"))
    assert "2 queued" in await push_once_created(push, redis_server, "tree")
    text = await finish(waiting)
    assert "Created job 'test'" in text  # it waited for URLs: it had none of its own
    # the two pushed subtrees: everything but page 0
    assert set(items([out])) == set(range(1, PAGES))


class InFlightSite(Site):
    def __init__(self, latency: float) -> None:
        super().__init__(latency)
        self.in_flight = 0
        self.max_in_flight = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await super().handle(request)
        finally:
            self.in_flight -= 1


@pytest.mark.virtual_time
async def test_a_slots_delay_holds_across_workers(serve: Any, redis_url: str) -> None:
    app, arrivals = arrivals_site()
    base = await serve(app)
    paced = {
        "DOWNLOAD_SLOTS": {"127.0.0.1": {"delay": 0.25, "randomize_delay": False}},
        "CLOSESPIDER_TIMEOUT": 3.9,
    }
    workers = [virtual_worker(redis_url, base, **paced) for _ in range(2)]
    stats = await asyncio.gather(*(worker.run() for worker in workers))
    assert all(s["response_received_count"] > 0 for s in stats)  # both crawled
    # One start every 0.25 s for both, not for each.
    assert arrivals == steps(0.0, 0.25, 16)


@pytest.mark.virtual_time
async def test_a_slot_limited_to_two_sees_two_in_flight_across_workers(
    serve: Any, redis_url: str
) -> None:
    site = InFlightSite(latency=0.1)  # virtual seconds
    base = await serve(site.app)
    limited = {
        "DOWNLOAD_SLOTS": {"127.0.0.1": {"concurrency": 2}},
        "CONCURRENT_REQUESTS": 1,
        "CLOSESPIDER_TIMEOUT": 2,
    }
    workers = [virtual_worker(redis_url, base, **limited) for _ in range(3)]
    stats = await asyncio.gather(*(worker.run() for worker in workers))
    crawled = [s.get("response_received_count", 0) > 0 for s in stats]
    assert crawled.count(True) >= 2  # the limit held across workers, not within one
    # Each worker alone would allow 1, three together 3: the slot allows 2 in all.
    assert site.max_in_flight == 2


async def job_state(redis_url: str) -> tuple[dict[str, Any], int]:
    """The job's stats summed over its workers in Redis, and how many finished tasks
    its exact dupe filter (the ``done`` hash) holds."""
    from redis.asyncio import Redis

    from skitter.cluster import RedisStats
    from skitter.engine import Stats
    from skitter.redis import JobKeys

    keys = JobKeys.for_job("tree", "test")
    client = Redis.from_url(redis_url)
    try:
        return await RedisStats(client, keys, Stats()).totals(), int(await client.hlen(keys.done))
    finally:
        await client.aclose()


async def test_stats_add_up_in_redis_over_the_workers(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site()
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    await run_workers(spider_file, redis_server.url, outs, base)
    per_worker = [len(items([out])) for out in outs]
    assert sum(per_worker) == PAGES
    totals, done_records = await job_state(redis_server.url)
    assert totals["item_scraped_count"] == PAGES  # both workers' counts, summed in Redis
    assert totals["response_received_count"] == PAGES
    assert done_records == PAGES
    # One host, no delay: downloads handed their permits on instead of a round trip each.
    assert 0 < totals["scheduler/cluster_permits_reused"] < PAGES


async def test_workers_with_the_bloom_filter_crawl_every_page_once(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site()
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    bloom = ("REDIS_DUPEFILTER=bloom", "REDIS_BLOOM_CAPACITY=10000")
    await run_workers(spider_file, redis_server.url, outs, base, *bloom)
    assert sorted(items(outs)) == list(range(PAGES))
    totals, done_records = await job_state(redis_server.url)
    assert done_records == 0  # every success is bits in the filter
    assert totals["dupefilter/bloom/count"] == PAGES
    assert 0 < totals["dupefilter/bloom/false_positive_rate"] < 0.001


PUSHED_SPIDER = """
from skitter import Spider


class Pushed(Spider):
    name = "pushed"
    allowed_domains = ["127.0.0.1"]

    def parse(self, response):
        yield {"url": response.url}
"""


async def test_a_pushed_offsite_url_is_never_fetched(
    host_site: Any, tmp_path: Path, redis_server: RedisServer
) -> None:
    """skitter push writes URLs straight into the frontier: no spider middleware sees
    them, only the worker's downloader, which refuses the offsite one."""
    site, port = await host_site({"/in": "in scope", "/out": "offsite"})
    spider_file = tmp_path / "pushed.py"
    spider_file.write_text(textwrap.dedent(PUSHED_SPIDER))
    out = tmp_path / "w.jsonl"
    push = await start_push(
        f"http://localhost:{port}/out", f"http://127.0.0.1:{port}/in", "--redis",
        redis_server.url, "--job", "test", "--spider", "pushed",
    )  # fmt: skip
    waiting = await start(worker(spider_file, redis_server.url, out, None, "WORKER_IDLE_TIMEOUT=3"))
    assert "2 queued" in await push_once_created(push, redis_server, "pushed")
    text = await finish(waiting)
    got = [json.loads(line)["url"] for line in out.read_text().splitlines() if line]
    assert got == [f"http://127.0.0.1:{port}/in"]
    assert site.on("localhost") == 0, text


class HeldSite(Site):
    """Serves ``free`` pages, then holds every request until ``release`` is set."""

    def __init__(self, free: int) -> None:
        super().__init__(latency=0.0)
        self.free = free
        self.release = asyncio.Event()

    async def handle(self, request: web.Request) -> web.Response:
        if len(self.served) >= self.free:
            await self.release.wait()
        return await super().handle(request)


@pytest.mark.parametrize("loss", ["FLUSHDB", "SHUTDOWN NOSAVE and restart"])
async def test_state_lost_in_redis_fails_every_worker_loudly(
    serve: Any, tmp_path: Path, spider_file: Path, loss: str
) -> None:
    """Not 'finished' after a third of the pages with exit 0: every worker fails loudly."""
    site = HeldSite(free=20)  # the crawl cannot end before the state is lost
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    with RedisServer(aof=False, binary=require_redis_server()) as server:
        roster = JobKeys.for_job("tree", "test").workers
        procs = []
        for joined, out in enumerate(outs, 1):
            procs.append(await start(worker(spider_file, server.url, out, base)))
            async with asyncio.timeout(30):  # the first creates the job, the second joins it
                while server.command("HLEN", roster) != f":{joined}".encode():  # noqa: ASYNC110
                    await asyncio.sleep(0.05)  # polls a real process (redis-server)
        async with asyncio.timeout(30):
            # both workers in the roster (a loaded machine may start the second late:
            # it must join the job before its state is lost, not create it afterwards)
            while server.command("HLEN", roster) != b":2" or len(site.served) < 20:  # noqa: ASYNC110
                await asyncio.sleep(0.05)  # polls a real process (redis-server)
        if loss == "FLUSHDB":
            assert server.command("FLUSHDB") == b"+OK"
        else:
            server.command("SHUTDOWN", "NOSAVE")
            await asyncio.to_thread(server.stop)
            await asyncio.to_thread(server.start)
        site.release.set()
        texts = []
        for proc in procs:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=90)
            texts.append(out.decode())
            assert proc.returncode == 1, texts[-1]
    assert "Created job 'test'" in texts[0] and "Joined job 'test'" in texts[1]
    for text in texts:
        assert "job state lost (Redis restarted without persistence?): job 'test'" in text
        assert "has no epoch" in text
        assert "(finished)" not in text
    assert len(set(items(outs))) < PAGES


async def test_planted_records_are_moved_aside_and_every_valid_page_is_crawled(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    """A record with priority inf or NaN once crashed lease() in every
    worker in turn."""
    import msgspec

    from skitter.frontier import RedisFrontier
    from skitter.http import Request

    site = Site()
    base = await serve(site.app)
    frontier = RedisFrontier(redis_server.url, project="tree", job="test")
    planted = [Request(f"{base}/p/inf"), Request(f"{base}/p/nan")]
    await frontier.push([Request(f"{base}/p/0"), *planted], time.time())
    for request, priority in zip(planted, (float("inf"), float("nan")), strict=True):
        raw = await frontier.client.hget(frontier.keys.tasks, request.taskid)
        record = msgspec.msgpack.decode(raw)
        record[1] = priority
        await frontier.client.hset(
            frontier.keys.tasks, request.taskid, msgspec.msgpack.encode(record)
        )
    await frontier.close()
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    procs = [await start(worker(spider_file, redis_server.url, out, None)) for out in outs]
    texts = [await finish(proc) for proc in procs]  # both exit 0
    assert sorted(items(outs)) == list(range(PAGES))
    assert any("invalid task record (priority)" in text for text in texts)
    totals, _ = await job_state(redis_server.url)
    assert totals["frontier/quarantined"] == 2
