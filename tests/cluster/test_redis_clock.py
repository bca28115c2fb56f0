"""One clock for the cluster: Redis's. Two workers whose clocks are 31 s apart share one
real Redis; the one ahead must not reclaim the other's live lease, nor free its
permits, end its delays or earn tokens early. What a worker computes from its own clock
(an exetime, a retry time, a back-off end) lands on Redis's clock as "that long from
now"."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.cluster import RedisPoliteness
from skitter.frontier import FrontierCounts, RedisFrontier
from skitter.http import Request
from skitter.redis import JobKeys

AHEAD = 31.0
LEASE = 30.0


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


@pytest.fixture
async def workers(redis_url: str) -> AsyncIterator[tuple[RedisFrontier, RedisFrontier]]:
    """Two workers' frontiers on one job, with Redis's clock (the default)."""
    on_time = RedisFrontier(redis_url, project="p", job="j")
    ahead = RedisFrontier(redis_url, project="p", job="j")
    yield on_time, ahead
    await on_time.close()
    await ahead.close()


async def test_a_worker_31s_ahead_neither_reclaims_nor_takes_a_live_lease(
    workers: tuple[RedisFrontier, RedisFrontier],
) -> None:
    on_time, ahead = workers
    now = time.time()
    await on_time.push([req("a")], now)
    (lease,) = await on_time.lease(1, now, LEASE)
    assert await ahead.reclaim_expired(now + AHEAD) == 0
    assert await ahead.lease(10, now + AHEAD, LEASE) == []
    assert await ahead.counts(now + AHEAD) == FrontierCounts(0, 0, 1)
    assert await on_time.ack(lease, now + 1)  # the task ran once


async def test_times_a_worker_computed_land_on_redis_clock(
    workers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    on_time, ahead = workers
    now = time.time() + AHEAD  # the worker's clock
    await ahead.push([req("later", exetime=now + 10), req("retry")], now)
    (lease,) = await ahead.lease(1, now, LEASE)
    assert await ahead.nack(lease, now, now + 20, "HTTP 503")
    scores = dict(await client.zrange(ahead.keys.delayed, 0, -1, withscores=True))
    redis_now = time.time()  # Redis runs on this machine's clock
    assert sorted(scores.values()) == pytest.approx([redis_now + 10, redis_now + 20], abs=3)
    # ... and the worker sees them on its own clock again
    due = await ahead.next_due()
    assert due == pytest.approx(now + 10, abs=3)
    assert await on_time.lease(10, time.time(), LEASE) == []  # not due for anyone yet


async def test_permits_delays_and_tokens_hold_against_a_worker_31s_ahead(
    client: Redis, keys: JobKeys
) -> None:
    on_time = RedisPoliteness(client, keys, owner="on-time")
    ahead = RedisPoliteness(client, keys, owner="ahead")
    now = time.time()
    permit, _ = await on_time.acquire("busy", now, concurrency=1, delay=0, lease_seconds=LEASE)
    assert permit is not None
    taken, wait = await ahead.acquire(
        "busy", now + AHEAD, concurrency=1, delay=0, lease_seconds=LEASE
    )
    assert taken is None and wait > 0, "the live permit was not freed"
    paced, _ = await on_time.acquire("slow", now, concurrency=5, delay=10, lease_seconds=LEASE)
    assert paced is not None
    early, wait = await ahead.acquire(
        "slow", now + AHEAD, concurrency=5, delay=10, lease_seconds=LEASE
    )
    assert early is None and 8 < wait <= 10, "the delay did not end early"
    assert await on_time.take_token(now, 1.0, 1.0) == 0.0
    assert await ahead.take_token(now + AHEAD, 1.0, 1.0) > 0.5, "no tokens earned early"
    assert await on_time.renew([("busy", permit)], now, LEASE) == [True]


async def test_a_backoff_set_by_a_worker_ahead_lasts_as_long_as_it_asked(
    client: Redis, keys: JobKeys
) -> None:
    on_time = RedisPoliteness(client, keys, owner="on-time")
    ahead = RedisPoliteness(client, keys, owner="ahead")
    clock = time.time() + AHEAD
    permit, _ = await ahead.acquire("h", clock, concurrency=1, delay=0, lease_seconds=LEASE)
    assert permit is not None
    await ahead.release("h", permit, clock, backoff_until=clock + 5)
    backoff = float(await client.hget(keys.pace("h"), "backoff"))
    assert backoff == pytest.approx(time.time() + 5, abs=2)
    taken, wait = await on_time.acquire(
        "h", time.time(), concurrency=1, delay=0, lease_seconds=LEASE
    )
    assert taken is None and 3 < wait <= 5
