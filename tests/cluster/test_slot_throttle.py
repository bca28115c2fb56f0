"""AutoThrottle with one delay per slot for the whole cluster (issue 14): every worker's
latency samples go back with its permit (``slot_release.lua``) and move the slot's one
delay in Redis, which ``slot_acquire.lua`` applies to every worker's next start. A real
redis-server; at the end, two workers in this process on virtual time against a real
HTTP server, so the starts are asserted exactly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from test_cluster_rate import virtual_worker

from skitter import Crawler
from skitter.cluster import RedisPoliteness
from skitter.redis import JobKeys
from skitter.scheduler import AutoThrottle
from skitter.testing import VirtualTimeLoop

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
def throttled_site(
    latency: float, watch: int
) -> tuple[web.Application, list[tuple[float, str]], asyncio.Event]:
    """A site that answers after ``latency`` virtual seconds and stamps each arrival
    with the virtual seconds since the test began and the worker that sent it; the
    event is set at the ``watch``-th arrival."""
    arrivals: list[tuple[float, str]] = []
    reached = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        now = asyncio.get_running_loop().time() - VirtualTimeLoop.START
        arrivals.append((now, request.headers["X-Worker"]))
        if len(arrivals) == watch:
            reached.set()
        await asyncio.sleep(latency)  # virtual: the site's latency
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app, arrivals, reached


def learned_starts(first: float, latency: float, count: int) -> list[float]:
    """When a throttled slot starts, alone on one host: each start one delay after the
    last, the delay moved by each answer (which comes before the next start)."""
    throttle = AutoThrottle(first, MAX, TARGET)
    starts, delay = [0.0], first
    while len(starts) < count:
        starts.append(starts[-1] + delay)
        delay = throttle.next_delay(delay, latency, 200, min_delay=FLOOR)
    return starts


@pytest.mark.virtual_time
async def test_a_worker_joining_late_uses_the_delay_the_cluster_has_learned(
    serve: Any, redis_url: str
) -> None:
    # AutoThrottle settles at 0.2 s a start; by the 14th the cluster has come down from 2 s.
    app, arrivals, learned = throttled_site(latency=0.2, watch=14)
    base = await serve(app)

    def throttled(name: str, timeout: float) -> Crawler:
        return virtual_worker(
            redis_url,
            base,
            AUTOTHROTTLE_ENABLED=True,
            AUTOTHROTTLE_START_DELAY=2,
            RANDOMIZE_DOWNLOAD_DELAY=False,
            CLOSESPIDER_TIMEOUT=timeout,
            DEFAULT_REQUEST_HEADERS={"X-Worker": name},
        )

    first_run = asyncio.create_task(throttled("a", 16).run())
    await learned.wait()
    await asyncio.gather(first_run, throttled("b", 6).run())
    times = [t for t, _ in arrivals]
    # One slot paced by one delay for both: the starts go on as if one worker crawled,
    # the newcomer's included. It starts at the learned 0.2 s, not at its own 2 s. (The
    # script keeps times as decimal strings: microseconds of rounding add up.)
    assert times == pytest.approx(learned_starts(2.0, 0.2, len(times)), abs=1e-5)
    senders = [worker for _, worker in arrivals]
    assert senders[:14] == ["a"] * 14
    # From its first ask (at the 14th start) the newcomer is told the learned 0.2 s, so
    # it claims the very next start; but so does "a", at the same virtual instant, and
    # the two equal claims are served in the order they reach Redis, which the real
    # round trips decide (each start of this slot is such a tie: they alternate). What
    # holds on any machine: it starts well before its own 2 s start delay would let it.
    joined = times[13]
    first = times[senders.index("b")]
    assert joined < first < joined + 2.0, "the newcomer paced by its own start delay"
    assert times[-1] > 15.5  # to the end of the first worker's 16 s
