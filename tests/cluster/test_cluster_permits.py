"""A worker's permits (``ClusterPermits``) on a real redis-server: a permit handed from
one download to the next of the same slot costs no round trip and never lets the
cluster exceed a slot's concurrency; spares go back when unused, when old, and at close."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.cluster import ClusterPermits, RedisPoliteness
from skitter.redis import JobKeys

T0 = 1_700_000_000.0
LEASE = 30.0
HOST = "example.com"


@pytest.fixture
def mine(counted: Any, keys: JobKeys) -> ClusterPermits:
    politeness = RedisPoliteness(counted.client, keys, owner="a", time_source="caller")
    return ClusterPermits(politeness, lease_seconds=LEASE)


@pytest.fixture
def theirs(client: Redis, keys: JobKeys) -> ClusterPermits:
    politeness = RedisPoliteness(client, keys, owner="b", time_source="caller")
    return ClusterPermits(politeness, lease_seconds=LEASE)


async def held(client: Redis, keys: JobKeys) -> int:
    return int(await client.zcard(keys.permits(HOST)))


async def test_a_permit_is_handed_to_the_next_download_of_the_slot_without_a_round_trip(
    mine: ClusterPermits, counted: Any, client: Redis, keys: JobKeys
) -> None:
    assert await mine.take(HOST, "t1", T0, concurrency=1, delay=0) == 0.0
    await mine.give_back("t1", T0 + 0.1, backoff_until=None, delay=0, more_queued=True)
    before = counted.sends
    assert await mine.take(HOST, "t2", T0 + 0.1, concurrency=1, delay=0) == 0.0
    assert counted.sends == before
    assert mine.reused == 1
    assert await held(client, keys) == 1


async def test_a_spare_still_counts_against_the_slot_for_other_workers(
    mine: ClusterPermits, theirs: ClusterPermits
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=2, delay=0)
    await mine.take(HOST, "t2", T0, concurrency=2, delay=0)
    await mine.give_back("t1", T0 + 0.1, backoff_until=None, delay=0, more_queued=True)
    assert await theirs.take(HOST, "u1", T0 + 0.1, concurrency=2, delay=0) > 0
    await mine.upkeep(T0 + 0.7, renew=False)  # the spare sat unused: back to the cluster
    assert await theirs.take(HOST, "u1", T0 + 0.7, concurrency=2, delay=0) == 0.0


@pytest.mark.parametrize(
    "ending",
    [
        {"backoff_until": None, "delay": 0, "more_queued": False},  # nothing left to start
        {"backoff_until": None, "delay": 1.5, "more_queued": True},  # the pace must move on
        {"backoff_until": T0 + 60, "delay": 0, "more_queued": True},  # a 429 for everyone
    ],
)
async def test_a_permit_goes_back_when_the_slot_cannot_use_it_at_once(
    mine: ClusterPermits, client: Redis, keys: JobKeys, ending: dict[str, object]
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=4, delay=0)
    await mine.give_back("t1", T0 + 0.1, **ending)  # type: ignore[arg-type]
    assert await held(client, keys) == 0
    assert len(mine) == 0


async def test_a_permit_changes_hands_once_it_has_been_reused_for_a_while(
    mine: ClusterPermits, client: Redis, keys: JobKeys
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=1, delay=0)
    await mine.give_back("t1", T0 + 1, backoff_until=None, delay=0, more_queued=True)
    await mine.take(HOST, "t2", T0 + 1, concurrency=1, delay=0)
    await mine.give_back("t2", T0 + mine.reuse_for, backoff_until=None, delay=0, more_queued=True)
    assert await held(client, keys) == 0


async def test_a_spare_is_not_used_once_the_slot_has_a_delay(
    mine: ClusterPermits, client: Redis, keys: JobKeys
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=1, delay=0)
    await mine.give_back("t1", T0 + 0.1, backoff_until=None, delay=0, more_queued=True)
    assert await mine.take(HOST, "t2", T0 + 0.1, concurrency=1, delay=2.0) == 0.0
    assert mine.reused == 0
    assert await held(client, keys) == 1  # the spare went back, a fresh permit came


async def test_upkeep_renews_permits_in_flight_and_spares(
    mine: ClusterPermits, client: Redis, keys: JobKeys
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=2, delay=0)
    await mine.take(HOST, "t2", T0, concurrency=2, delay=0)
    await mine.give_back("t1", T0 + 1, backoff_until=None, delay=0, more_queued=True)
    await mine.upkeep(T0 + 1.2, renew=True)
    expiries = [
        score for _, score in await client.zrange(keys.permits(HOST), 0, -1, withscores=True)
    ]
    assert expiries == [T0 + 1.2 + LEASE] * 2


async def test_close_returns_every_permit(
    mine: ClusterPermits, client: Redis, keys: JobKeys
) -> None:
    await mine.take(HOST, "t1", T0, concurrency=3, delay=0)
    await mine.take(HOST, "t2", T0, concurrency=3, delay=0)
    await mine.give_back("t1", T0 + 0.1, backoff_until=None, delay=0, more_queued=True)
    await mine.close(T0 + 0.2)
    assert await held(client, keys) == 0
    assert len(mine) == 0


async def test_a_download_starting_while_upkeep_returns_spares_gets_a_fresh_permit(
    mine: ClusterPermits, client: Redis, keys: JobKeys
) -> None:
    for taskid in ("t1", "t2", "t3"):
        await mine.take(HOST, taskid, T0, concurrency=3, delay=0)
    for taskid in ("t1", "t2"):
        await mine.give_back(taskid, T0 + 0.1, backoff_until=None, delay=0, more_queued=True)
    # upkeep awaits Redis for each stale spare it returns; the take runs in between.
    await asyncio.gather(
        mine.upkeep(T0 + 1, renew=False), mine.take(HOST, "t4", T0 + 1, concurrency=3, delay=0)
    )
    assert mine.reused == 0
    assert await held(client, keys) == 2  # t3's and t4's
