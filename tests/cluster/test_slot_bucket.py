"""A slot's token bucket (DOWNLOAD_SLOT_RATE) is one for the whole cluster (issue 14): it
lives in the slot's pace key and is taken in the same script call as the slot's permit.
A real redis-server; at the end, real ``skitter worker`` processes against a real HTTP
server that counts arrivals."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from redis.asyncio import Redis
from test_cluster_rate import arrivals_site, steps, virtual_worker

from skitter.cluster import ClusterPermits, RedisPoliteness
from skitter.redis import JobKeys

T0 = 1_700_000_000.0
HOST = "example.com"
LEASE = 30.0


@pytest.fixture
def pair(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def start(worker: RedisPoliteness, now: float, bucket: tuple[float, float]) -> bool:
    """One download started and ended at ``now``: True if the slot let it start."""
    permit, _ = await worker.acquire(
        HOST, now, concurrency=100, delay=0, lease_seconds=LEASE, bucket=bucket
    )
    if permit is None:
        return False
    await worker.release(HOST, permit, now)
    return True


async def test_two_workers_share_one_bucket_of_rate_times_t_plus_burst(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    rate, burst, seconds, step = 4.0, 2.0, 10.0, 0.05
    started = 0
    for i in range(round(seconds / step) + 1):
        now = T0 + i * step
        for worker in pair:  # each worker starts all it can at each tick
            while await start(worker, now, (rate, burst)):
                started += 1
            assert started <= rate * (now - T0) + burst + 1e-6
    assert started == math.floor(rate * seconds + burst)


async def test_the_burst_holds_for_the_cluster_from_the_first_request(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    assert await start(a, T0, (1.0, 3.0))
    assert await start(b, T0, (1.0, 3.0))
    assert await start(a, T0, (1.0, 3.0))
    permit, wait = await b.acquire(
        HOST, T0, concurrency=100, delay=0, lease_seconds=LEASE, bucket=(1.0, 3.0)
    )
    assert permit is None
    assert wait == pytest.approx(1.0)


async def test_a_slot_without_a_bucket_is_not_limited_by_one(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = pair
    for _ in range(50):
        permit, _ = await a.acquire(HOST, T0, concurrency=100, delay=0, lease_seconds=LEASE)
        assert permit is not None
    assert not await client.exists(keys.pace(HOST)), "no delay, no bucket: no pace key"


async def test_the_bucket_key_lasts_until_it_is_full_again_and_no_less(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a = RedisPoliteness(client, keys, owner="w", time_source="caller", idle_ttl=5.0)
    permit, _ = await a.acquire(
        HOST, T0, concurrency=5, delay=0, lease_seconds=LEASE, bucket=(0.1, 2.0)
    )
    assert permit is not None
    ttl = await client.pttl(keys.pace(HOST))
    assert 14_000 < ttl <= 15_000  # 1 token back at 0.1/s: 10 s, plus the idle ttl
    # A short back-off from a 429 does not cut the bucket's life short.
    await a.release(HOST, permit, T0, backoff_until=T0 + 1)
    assert await client.pttl(keys.pace(HOST)) > 13_000


async def test_a_spare_permit_is_never_handed_on_for_a_bucket_slot(
    counted: Any, keys: JobKeys
) -> None:
    store = RedisPoliteness(counted.client, keys, owner="a", time_source="caller")
    mine = ClusterPermits(store, lease_seconds=LEASE)
    bucket = (1.0, 1.0)
    assert await mine.take(HOST, "t1", T0, concurrency=2, delay=0, bucket=bucket) == 0.0
    await mine.give_back(
        "t1", T0 + 0.1, backoff_until=None, delay=0, more_queued=True, own_pace=True
    )
    assert len(mine) == 0, "given back: the next download must take a token"
    assert await mine.take(HOST, "t2", T0 + 0.1, concurrency=2, delay=0, bucket=bucket) > 0
    assert mine.reused == 0


async def test_taking_the_token_costs_no_extra_round_trip(counted: Any, keys: JobKeys) -> None:
    store = RedisPoliteness(counted.client, keys, owner="a", time_source="caller")
    await store.acquire(HOST, T0, concurrency=9, delay=0, lease_seconds=LEASE, bucket=(5.0, 5.0))
    before = counted.sends
    await store.acquire(HOST, T0, concurrency=9, delay=0, lease_seconds=LEASE, bucket=(5.0, 5.0))
    assert counted.sends - before == 1


async def test_bad_buckets_are_refused(pair: tuple[RedisPoliteness, RedisPoliteness]) -> None:
    a, _ = pair
    for bad in ((0.0, 1.0), (1.0, -1.0), (math.inf, 1.0)):
        with pytest.raises(ValueError, match=r"rate|burst"):
            await a.acquire(HOST, T0, concurrency=1, delay=0, lease_seconds=LEASE, bucket=bad)


# -- end to end ------------------------------------------------------------------------------
@pytest.mark.virtual_time
async def test_two_workers_hold_one_hosts_slot_rate_together(serve: Any, redis_url: str) -> None:
    app, arrivals = arrivals_site()
    base = await serve(app)
    # (closed at 4.9 s: not at the instant of a token, where either could come first)
    limited = {"DOWNLOAD_SLOT_RATE": 4.0, "DOWNLOAD_SLOT_BURST": 3.0, "CLOSESPIDER_TIMEOUT": 4.9}
    workers = [virtual_worker(redis_url, base, **limited) for _ in range(2)]
    stats = await asyncio.gather(*(worker.run() for worker in workers))
    assert all(s["response_received_count"] > 0 for s in stats)  # both crawled
    # The burst at once, then 4/s for the two workers together, not 4/s each.
    assert arrivals == [0.0] * 3 + steps(0.25, 0.25, 19)
