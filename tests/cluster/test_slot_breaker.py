"""A slot's circuit breaker is one for the whole cluster (issue 14): failures in a row by
any workers open it for all of them, and the cluster then sends ``probes`` downloads.
A real redis-server; at the end, real ``skitter worker`` processes against a real HTTP
server that fails every request and records when each arrives."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from test_workers import run_workers

from skitter.cluster import RedisPoliteness
from skitter.frontier._redis import JobKeys
from skitter.testing._redis import RedisServer, require_redis_server

T0 = 1_700_000_000.0
HOST = "example.com"
LEASE = 30.0
BREAKER = (3, 10.0, 2)  # threshold, pause, probes


@pytest.fixture
def pair(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def take(worker: RedisPoliteness, now: float) -> tuple[str | None, float]:
    return await worker.acquire(
        HOST, now, concurrency=100, delay=0, lease_seconds=LEASE, breaker=BREAKER
    )


async def download(worker: RedisPoliteness, now: float, ok: bool) -> None:
    permit, wait = await take(worker, now)
    assert permit is not None, wait
    await worker.release(HOST, permit, now, ok=ok, breaker=BREAKER)


async def test_failures_by_two_workers_open_it_for_both(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    await download(a, T0, ok=False)
    await download(b, T0 + 1, ok=False)
    await download(a, T0 + 2, ok=False)  # the third in a row, by either worker
    assert await take(a, T0 + 2) == (None, pytest.approx(10.0))
    assert await take(b, T0 + 5) == (None, pytest.approx(7.0))


async def test_a_success_between_failures_keeps_it_closed(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    for worker, ok in ((a, False), (b, False), (a, True), (b, False), (a, False)):
        await download(worker, T0, ok)
    permit, _ = await take(b, T0)
    assert permit is not None


async def test_after_the_pause_the_cluster_sends_probes_then_closes_on_a_success(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    for _ in range(3):
        await download(a, T0, ok=False)
    probe_a, _ = await take(a, T0 + 10)
    probe_b, _ = await take(b, T0 + 10)
    assert probe_a is not None and probe_b is not None  # two probes for the cluster
    assert await take(a, T0 + 11) == (None, pytest.approx(9.0)), "every probe is out"
    await b.release(HOST, probe_b, T0 + 11, ok=True, breaker=BREAKER)
    for _ in range(5):  # closed: no limit but concurrency
        permit, _ = await take(a, T0 + 11)
        assert permit is not None


async def test_failed_probes_open_it_again(pair: tuple[RedisPoliteness, RedisPoliteness]) -> None:
    a, b = pair
    for _ in range(3):
        await download(b, T0, ok=False)
    await download(a, T0 + 10, ok=False)
    await download(b, T0 + 10, ok=False)  # both probes failed: another pause
    assert await take(a, T0 + 10) == (None, pytest.approx(10.0))
    permit, _ = await take(a, T0 + 20)
    assert permit is not None


async def test_results_that_arrive_while_open_are_ignored(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    late, _ = await take(b, T0)  # sent before the breaker opened
    assert late is not None
    for _ in range(3):
        await download(a, T0, ok=False)
    await b.release(HOST, late, T0 + 1, ok=True, breaker=BREAKER)
    assert await take(a, T0 + 1) == (None, pytest.approx(9.0)), "still open"


async def test_unanswered_probes_get_a_new_round_after_a_pause(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, _ = pair
    for _ in range(3):
        await download(a, T0, ok=False)
    for _ in range(2):
        permit, _ = await take(a, T0 + 10)
        assert permit is not None  # their results never come (a worker died)
    assert (await take(a, T0 + 15))[0] is None
    assert (await take(a, T0 + 20))[0] is not None


async def test_the_breaker_outlives_its_pause_in_redis(
    client: Redis, keys: JobKeys, pair: tuple[RedisPoliteness, RedisPoliteness]
) -> None:
    a = RedisPoliteness(client, keys, owner="w", time_source="caller", idle_ttl=1.0)
    for _ in range(3):
        await download(a, T0, ok=False)
    assert 10_000 < await client.pttl(keys.pace(HOST)) <= 11_000


# -- end to end ------------------------------------------------------------------------------
FAILING = """
from skitter import Request, Spider


class Failing(Spider):
    name = "tree"

    def start_requests(self):
        for n in range(200):
            yield Request(self.settings["BASE"] + f"/p/{n}")

    def parse(self, response):
        yield {"n": response.url}
"""


class Broken:
    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.app = web.Application()
        self.app.router.add_get("/p/{n}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        self.arrivals.append(time.monotonic())
        return web.Response(status=500, text="down")


@pytest.fixture
def live_redis() -> Any:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


async def test_a_host_failing_ten_times_pauses_every_worker_then_gets_the_probes(
    serve: Any, tmp_path: Path, live_redis: RedisServer
) -> None:
    spider_file = tmp_path / "failing.py"
    spider_file.write_text(FAILING)
    site = Broken()
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    pause = 3.0
    breaker = f'{{"breaker_threshold": 10, "breaker_pause": {pause}, "breaker_probes": 2}}'
    settings = (
        f'DOWNLOAD_SLOTS={{"127.0.0.1": {{"concurrency": 2, {breaker[1:]}}}',
        "BREAKER_THRESHOLD=0",  # the project's own breaker stays out of it
        "RETRY_TIMES=0",
        "CLOSESPIDER_TIMEOUT=9",
    )
    await run_workers(spider_file, live_redis.url, outs, base, *settings)
    times = sorted(site.arrivals)
    gaps = [(later - earlier, i) for i, (earlier, later) in enumerate(itertools.pairwise(times), 1)]
    pauses = [(gap, i) for gap, i in gaps if gap > pause * 0.8]
    assert pauses, times
    _, first = pauses[0]
    # Ten failures in a row, plus at most what was in flight on the host (2, cluster-wide).
    assert 10 <= first <= 12, first
    # No request during the pause; then the cluster's two probes, and another pause.
    assert len(pauses) >= 2, gaps
    _, second = pauses[1]
    assert second - first == 2, (first, second)
    assert all(gap <= pause * 1.3 for gap, _ in pauses)
