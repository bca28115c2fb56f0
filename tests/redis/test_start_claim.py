"""The start-request claim is fenced like a lease: a worker whose claim lapsed can
neither move the offset back nor renew (or finish) the claim another worker took over;
the offset never moves back; a job whose state vanished is JobStateLost here too."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from skitter._cluster import StartClaim
from skitter.exceptions import JobStateLost
from skitter.frontier import RedisFrontier


@pytest.fixture
async def frontiers(redis_url: str) -> AsyncIterator[tuple[RedisFrontier, RedisFrontier]]:
    one = RedisFrontier(redis_url, project="p", job="j")
    two = RedisFrontier(redis_url, project="p", job="j")
    await one.open_job()
    await two.open_job()
    yield one, two
    await one.close()
    await two.close()


async def offset(client: Redis, frontier: RedisFrontier) -> int:
    return int(await client.hget(frontier.keys.start, "offset") or 0)


async def test_an_expired_claimer_cannot_move_the_offset_back_or_keep_the_claim(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, two = frontiers
    slow = StartClaim(one, "slow", lease_seconds=1.0)
    fast = StartClaim(two, "fast", lease_seconds=1.0)
    assert await slow.wait_turn(poll=0.05) == 0
    assert await slow.progress(3)
    await asyncio.sleep(1.1)  # the slow worker paused: its claim lapsed
    assert await asyncio.wait_for(fast.wait_turn(poll=0.05), 5) == 3
    assert await fast.progress(7)
    assert not await slow.progress(4), "a stale claimer is refused"
    assert await offset(client, one) == 7
    assert not await slow.finished(4)
    assert await client.hget(one.keys.start, "done") is None
    assert await client.get(one.keys.start_claim) is not None, "the new claim stands"
    assert await fast.finished(9)
    assert await offset(client, one) == 9
    assert await slow.wait_turn(poll=0.05) is None  # all queued


async def test_the_offset_never_moves_back(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, _ = frontiers
    claim = StartClaim(one, "w", lease_seconds=5.0)
    assert await claim.wait_turn(poll=0.05) == 0
    assert await claim.progress(5)
    assert await claim.progress(2)
    assert await offset(client, one) == 5


async def test_a_claim_on_a_lost_job_is_job_state_lost(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, two = frontiers
    claim = StartClaim(one, "w", lease_seconds=5.0)
    assert await claim.wait_turn(poll=0.05) == 0
    await client.flushdb()
    with pytest.raises(JobStateLost, match="has no epoch"):
        await claim.progress(1)
    with pytest.raises(JobStateLost, match="has no epoch"):
        await StartClaim(two, "other", lease_seconds=5.0).wait_turn(poll=0.05)
    assert await client.keys("*") == []
