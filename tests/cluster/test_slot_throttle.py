"""AutoThrottle with one delay per slot for the whole cluster (issue 14): every worker's
latency samples go back with its permit (``slot_release.lua``) and move the slot's one
delay in Redis, which ``slot_acquire.lua`` applies to every worker's next start. A real
redis-server; at the end, real ``skitter worker`` processes against a real HTTP server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from test_workers import SPIDER, Site, finish, start, worker

from skitter.cluster import RedisPoliteness
from skitter.frontier._redis import JobKeys
from skitter.scheduler import AutoThrottle
from skitter.testing._redis import RedisServer, require_redis_server

T0 = 1_700_000_000.0
HOST = "example.com"
LEASE = 30.0
START, MAX, TARGET, FLOOR = 5.0, 60.0, 1.0, 0.0


@pytest.fixture
def pair(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def download(
    worker: RedisPoliteness, now: float, latency: float, status: int | None = 200
) -> float:
    """Start (if the slot allows) and end a download; the wait if it could not start."""
    permit, wait = await worker.acquire(
        HOST, now, concurrency=10, delay=FLOOR, lease_seconds=LEASE, throttle_start=START
    )
    if permit is None:
        return wait
    sample = (latency, status, START, MAX, TARGET, FLOOR)
    await worker.release(HOST, permit, now, sample=sample)
    return 0.0


async def shared_delay(client: Redis, keys: JobKeys) -> float:
    return float(await client.hget(keys.pace(HOST), "tdelay"))


async def test_samples_from_both_workers_move_one_delay_as_scrapy_would(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, b = pair
    local = AutoThrottle(START, MAX, TARGET)
    delay, now = local.initial_delay(FLOOR), T0
    for one, latency in ((a, 1.0), (b, 0.5), (a, 0.2), (b, 3.0), (a, 0.1)):
        assert await download(one, now, latency) == 0.0
        now += delay  # the next start allowed, by either worker: the delay it started at
        delay = local.next_delay(delay, latency, 200, min_delay=FLOOR)
        assert await shared_delay(client, keys) == pytest.approx(delay)


async def test_the_shared_delay_holds_every_worker_back(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    assert await download(a, T0, latency=2.0) == 0.0  # starts at the first delay: 5 s
    assert await download(b, T0 + 1, latency=2.0) == pytest.approx(4.0)
    assert await download(b, T0 + 5, latency=2.0) == 0.0  # 3.5 s since: (5 + 2) / 2
    assert await download(a, T0 + 6, latency=2.0) == pytest.approx(3.5 - 1.0)


async def test_an_error_never_lowers_it(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = pair
    await download(a, T0, latency=0.01, status=500)
    assert await shared_delay(client, keys) == pytest.approx(START)
    await download(a, T0 + 10, latency=0.01, status=None)
    assert await shared_delay(client, keys) == pytest.approx(START)
    await download(a, T0 + 20, latency=0.01, status=200)
    assert await shared_delay(client, keys) == pytest.approx((START + 0.01) / 2)


# -- end to end ------------------------------------------------------------------------------
@pytest.fixture
def live_redis() -> Any:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


async def test_a_worker_joining_late_uses_the_delay_the_cluster_has_learned(
    serve: Any, tmp_path: Path, live_redis: RedisServer
) -> None:
    spider_file = tmp_path / "tree.py"
    spider_file.write_text(SPIDER)
    site = Site(latency=0.2)  # AutoThrottle settles at one start every 0.2 s
    base = await serve(site.app)
    settings = (
        "AUTOTHROTTLE_ENABLED=true",
        "AUTOTHROTTLE_START_DELAY=2",
        "RANDOMIZE_DOWNLOAD_DELAY=false",
    )
    out_a, out_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first = await start(
        worker(spider_file, live_redis.url, out_a, base, *settings, "CLOSESPIDER_TIMEOUT=16")
    )
    async with asyncio.timeout(30):  # the cluster's delay has come down from 2 s
        while len(site.served) < 14:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    late = await start(
        worker(spider_file, live_redis.url, out_b, base, *settings, "CLOSESPIDER_TIMEOUT=6")
    )
    joined = time.monotonic()
    for proc in (first, late):
        await finish(proc)
    window = [t for t, _ in site.served if joined + 1 <= t < joined + 5]
    # Still about 5/s with the newcomer: it starts at the learned 0.2 s, not at 2 s.
    assert 5 * 4 * 0.7 <= len(window) <= 5 * 4 * 1.2, len(window)
