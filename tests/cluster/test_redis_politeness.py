"""Cluster-wide politeness on a real redis-server: two ``RedisPoliteness`` objects on one
job stand for two workers, and together they must keep each slot's concurrency, delay
and back-off, and the project's token bucket, as one worker would."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.cluster import RedisPoliteness
from skitter.redis import JobKeys
from skitter.testing import wait_until

T0 = 1_700_000_000.0
LEASE = 30.0
HOST = "example.com"


@pytest.fixture
def workers(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def held(client: Redis, keys: JobKeys, slot: str = HOST) -> int:
    return int(await client.zcard(keys.permits(slot)))


# -- concurrency --------------------------------------------------------------------------
async def test_simultaneous_requests_from_two_workers_get_exactly_concurrency_permits(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    attempts = [
        w.acquire(HOST, T0, concurrency=3, delay=0, lease_seconds=LEASE) for w in (a, b) * 10
    ]
    results = await asyncio.gather(*attempts)
    granted = [permit for permit, _ in results if permit is not None]
    assert len(granted) == 3
    assert len(set(granted)) == 3
    assert sorted(wait for permit, wait in results if permit is None) == [0.05] * 17


async def test_hammering_two_workers_never_hold_more_than_concurrency(
    workers: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    concurrency = 3
    in_flight: set[str] = set()
    most = 0

    async def download(worker: RedisPoliteness) -> None:
        nonlocal most
        for _ in range(5):
            while True:
                permit, wait = await worker.acquire(
                    HOST, T0, concurrency=concurrency, delay=0, lease_seconds=LEASE
                )
                if permit is not None:
                    break
                assert wait > 0
                await asyncio.sleep(0)
            in_flight.add(permit)
            most = max(most, len(in_flight))
            assert len(in_flight) <= concurrency
            assert await held(client, keys) <= concurrency
            await asyncio.sleep(0)
            in_flight.discard(permit)
            assert await worker.release(HOST, permit, T0)

    async with asyncio.TaskGroup() as group:  # a failed check cancels the others
        for worker in workers * 8:
            group.create_task(download(worker))
    assert most == concurrency, "the workers did contend for the slot"
    assert not await client.exists(keys.permits(HOST)), "no permit left behind"


async def test_slots_are_independent(workers: tuple[RedisPoliteness, RedisPoliteness]) -> None:
    a, b = workers
    assert (await a.acquire("a.com", T0, concurrency=1, delay=5, lease_seconds=LEASE))[0]
    assert (await b.acquire("b.com", T0, concurrency=1, delay=5, lease_seconds=LEASE))[0]
    assert (await b.acquire("a.com", T0, concurrency=1, delay=0, lease_seconds=LEASE))[0] is None


# -- delay ----------------------------------------------------------------------------------
async def test_delay_spaces_starts_across_workers(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    polite = {"concurrency": 8, "delay": 2.0, "lease_seconds": LEASE}
    assert (await a.acquire(HOST, T0, **polite))[0] is not None
    assert await b.acquire(HOST, T0 + 0.5, **polite) == (None, 1.5)
    permit, wait = await b.acquire(HOST, T0 + 2.0, **polite)
    assert permit is not None and wait == 0.0
    assert await a.acquire(HOST, T0 + 2.5, **polite) == (None, 1.5)
    # A worker whose delay is 0 for this host still waits for the delay another set.
    assert (await a.acquire(HOST, T0 + 3.0, concurrency=8, delay=0, lease_seconds=LEASE))[0] is None
    assert (await a.acquire(HOST, T0 + 4.0, concurrency=8, delay=0, lease_seconds=LEASE))[0]


# -- leases ----------------------------------------------------------------------------------
async def test_a_dead_worker_frees_the_slot_when_its_lease_runs_out(
    workers: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    dead, alive = workers
    for _ in range(2):  # the dead worker took both permits and never released them
        assert (await dead.acquire(HOST, T0, concurrency=2, delay=0, lease_seconds=LEASE))[0]
    permit, wait = await alive.acquire(HOST, T0 + 29, concurrency=2, delay=0, lease_seconds=LEASE)
    assert permit is None and wait == 0.05
    # Less than busy_wait before the earliest lease ends: wait exactly that long.
    _, wait = await alive.acquire(HOST, T0 + 29.99, concurrency=2, delay=0, lease_seconds=LEASE)
    assert wait == pytest.approx(0.01)
    permit, _ = await alive.acquire(HOST, T0 + LEASE, concurrency=2, delay=0, lease_seconds=LEASE)
    assert permit is not None
    assert await held(client, keys) == 1, "both lapsed permits were dropped"


async def test_renew_keeps_a_long_download_permit_and_refuses_a_lapsed_one(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    p1, _ = await a.acquire(HOST, T0, concurrency=1, delay=0, lease_seconds=10)
    p2, _ = await a.acquire("other.com", T0, concurrency=1, delay=0, lease_seconds=5)
    assert p1 is not None and p2 is not None
    assert await a.renew([(HOST, p1), ("other.com", p2)], T0 + 8, 10) == [True, False]
    assert await a.renew([], T0 + 8, 10) == []
    # p1 now lasts until T0 + 18; p2 lapsed at T0 + 5 and stays lapsed.
    assert (await b.acquire(HOST, T0 + 17, concurrency=1, delay=0, lease_seconds=10))[0] is None
    assert (await b.acquire("other.com", T0 + 8, concurrency=1, delay=0, lease_seconds=10))[0]
    assert (await b.acquire(HOST, T0 + 18, concurrency=1, delay=0, lease_seconds=10))[0]
    assert not await a.release(HOST, p1, T0 + 19), "a lapsed permit is not released twice"


# -- back-off -------------------------------------------------------------------------------
async def test_a_backoff_from_one_worker_holds_back_the_other(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    permit, _ = await a.acquire(HOST, T0, concurrency=4, delay=0, lease_seconds=LEASE)
    assert permit is not None
    assert await a.release(HOST, permit, T0 + 1, backoff_until=T0 + 11)
    assert await b.acquire(HOST, T0 + 5, concurrency=4, delay=0, lease_seconds=LEASE) == (
        None,
        6.0,
    )
    assert (await b.acquire(HOST, T0 + 11, concurrency=4, delay=0, lease_seconds=LEASE))[0]


async def test_a_shorter_backoff_never_cuts_a_longer_one(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    pa, _ = await a.acquire(HOST, T0, concurrency=2, delay=0, lease_seconds=LEASE)
    pb, _ = await b.acquire(HOST, T0, concurrency=2, delay=0, lease_seconds=LEASE)
    assert pa is not None and pb is not None
    await a.release(HOST, pa, T0 + 1, backoff_until=T0 + 60)  # Retry-After: 59
    await b.release(HOST, pb, T0 + 1, backoff_until=T0 + 3)  # a plain 503 answer
    assert await b.acquire(HOST, T0 + 3, concurrency=2, delay=0, lease_seconds=LEASE) == (
        None,
        57.0,
    )


async def test_a_backoff_applies_even_when_the_permit_had_lapsed(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    permit, _ = await a.acquire(HOST, T0, concurrency=1, delay=0, lease_seconds=1)
    assert permit is not None
    assert not await a.release(HOST, permit, T0 + 2, backoff_until=T0 + 12)
    assert (await b.acquire(HOST, T0 + 11, concurrency=1, delay=0, lease_seconds=1)) == (None, 1.0)


# -- the shared token bucket ------------------------------------------------------------------
async def test_the_shared_bucket_hands_out_rate_times_t_plus_burst_across_workers(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    rate, burst, seconds, step = 4.0, 3.0, 10.0, 0.02
    taken = 0
    for i in range(round(seconds / step) + 1):
        now = T0 + i * step
        for worker in workers:  # each worker takes all it can at each tick
            while await worker.take_token(now, rate, burst) == 0.0:
                taken += 1
            assert taken <= rate * (now - T0) + burst + 1e-6
    assert taken == math.floor(rate * seconds + burst)


async def test_the_wait_returned_is_when_the_next_token_comes(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    assert await a.take_token(T0, 2.0, 1.0) == 0.0
    wait = await b.take_token(T0 + 0.1, 2.0, 1.0)
    assert wait == pytest.approx(0.4)
    assert await b.take_token(T0 + 0.1 + wait, 2.0, 1.0) == 0.0


async def test_a_rate_change_applies_at_once_to_every_worker(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = workers
    assert await a.take_token(T0, 10.0, 1.0) == 0.0
    assert await b.take_token(T0, 10.0, 1.0) == pytest.approx(0.1)
    assert await b.take_token(T0, 1.0, 1.0) == pytest.approx(1.0), "slower from this call on"
    assert await a.take_token(T0 + 0.5, 1.0, 1.0) == pytest.approx(0.5)
    # A lower burst caps the tokens earned while idle.
    for _ in range(3):
        assert await a.take_token(T0 + 1000, 5.0, 3.0) == 0.0
    assert await b.take_token(T0 + 2000, 5.0, 2.0) == 0.0
    assert await b.take_token(T0 + 2000, 5.0, 2.0) == 0.0
    assert await a.take_token(T0 + 2000, 5.0, 2.0) == pytest.approx(0.2)


async def test_a_zero_rate_or_a_burst_below_one_never_gives_a_token(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, _ = workers
    assert await a.take_token(T0, 0.0, 1.0) == 0.0, "the bucket starts full"
    assert await a.take_token(T0 + 100, 0.0, 1.0) == math.inf
    assert await a.take_token(T0 + 100, 5.0, 0.5) == math.inf


async def test_a_worker_with_a_clock_behind_mints_no_extra_tokens(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    ahead, behind = workers
    assert await ahead.take_token(T0 + 10, 1.0, 1.0) == 0.0
    assert await behind.take_token(T0, 1.0, 1.0) > 0
    assert await behind.take_token(T0 + 5, 1.0, 1.0) > 0


# -- keys -----------------------------------------------------------------------------------
async def test_idle_slot_keys_expire(
    workers: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = workers
    permit, _ = await a.acquire(HOST, T0, concurrency=1, delay=2.0, lease_seconds=LEASE)
    assert permit is not None
    assert 0 < await client.pttl(keys.permits(HOST)) <= (LEASE + a.idle_ttl) * 1000
    assert 0 < await client.pttl(keys.pace(HOST)) <= (2.0 + a.idle_ttl) * 1000
    await a.release(HOST, permit, T0 + 1)
    assert not await client.exists(keys.permits(HOST))
    # A slot without delay or back-off keeps no pace key at all.
    permit, _ = await a.acquire("fast.com", T0, concurrency=1, delay=0, lease_seconds=LEASE)
    assert permit is not None
    await a.release("fast.com", permit, T0)
    assert not await client.exists(keys.pace("fast.com"), keys.permits("fast.com"))


async def test_a_dead_workers_permit_key_vanishes_on_its_own(client: Redis, keys: JobKeys) -> None:
    worker = RedisPoliteness(client, keys, owner="dies", idle_ttl=0.01, time_source="caller")
    now = time.time()
    permit, _ = await worker.acquire(HOST, now, concurrency=1, delay=0.01, lease_seconds=0.05)
    assert permit is not None and await client.exists(keys.permits(HOST), keys.pace(HOST)) == 2
    # Redis expires them on its own clock: nothing to wait on but the keys themselves.

    async def expired() -> bool:
        return not await client.exists(keys.permits(HOST), keys.pace(HOST))

    await wait_until(expired, timeout=5)


async def test_two_jobs_do_not_share_politeness(client: Redis) -> None:
    one = RedisPoliteness(client, JobKeys.for_job("shop", "a"), owner="w", time_source="caller")
    two = RedisPoliteness(client, JobKeys.for_job("shop", "b"), owner="w", time_source="caller")
    assert (await one.acquire(HOST, T0, concurrency=1, delay=9, lease_seconds=LEASE))[0]
    assert (await two.acquire(HOST, T0, concurrency=1, delay=9, lease_seconds=LEASE))[0]
    assert await one.take_token(T0, 1.0, 1.0) == 0.0
    assert await two.take_token(T0, 1.0, 1.0) == 0.0


async def test_clear_removes_every_politeness_key(
    workers: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = workers
    other_job = JobKeys.for_job("shop", "other")
    other = RedisPoliteness(client, other_job, owner="w", time_source="caller")
    for slot in ("a.com", "b.com", "we:ird{slot}*"):
        await a.acquire(slot, T0, concurrency=1, delay=5, lease_seconds=LEASE)
    await a.take_token(T0, 1.0, 1.0)
    await other.acquire("a.com", T0, concurrency=1, delay=5, lease_seconds=LEASE)
    assert await a.clear() == 7
    assert await client.keys(f"{keys.tag}*") == []
    assert await client.exists(other.keys.pace("a.com")), "another job's keys stay"


async def test_bad_arguments_are_refused(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, _ = workers
    with pytest.raises(ValueError, match="concurrency"):
        await a.acquire(HOST, T0, concurrency=0, delay=0, lease_seconds=LEASE)
    with pytest.raises(ValueError, match="lease_seconds"):
        await a.acquire(HOST, T0, concurrency=1, delay=0, lease_seconds=0)
    with pytest.raises(ValueError, match="delay"):
        await a.acquire(HOST, T0, concurrency=1, delay=math.nan, lease_seconds=1)
    with pytest.raises(ValueError, match="rate"):
        await a.take_token(T0, -1.0, 1.0)
    with pytest.raises(ValueError, match="slot"):
        await a.acquire("", T0, concurrency=1, delay=0, lease_seconds=1)


async def test_each_operation_is_one_round_trip(counted: Any, keys: JobKeys) -> None:
    worker = RedisPoliteness(counted.client, keys, owner="w", time_source="caller")
    # Load the scripts once: the first call of each on a server costs a NOSCRIPT.
    permit, _ = await worker.acquire(HOST, T0, concurrency=2, delay=0, lease_seconds=LEASE)
    assert permit is not None
    await worker.renew([(HOST, permit)], T0, LEASE)
    await worker.release(HOST, permit, T0)
    await worker.take_token(T0, 1.0, 1.0)

    async def trips(operation: object) -> int:
        before = counted.sends
        await operation  # type: ignore[misc]
        return counted.sends - before

    permits = []
    for slot in ("a", "b", "c"):
        permit, _ = await worker.acquire(slot, T0, concurrency=2, delay=0, lease_seconds=LEASE)
        assert permit is not None
        permits.append((slot, permit))
    assert await trips(worker.acquire(HOST, T0, concurrency=2, delay=1, lease_seconds=LEASE)) == 1
    assert await trips(worker.acquire(HOST, T0, concurrency=2, delay=1, lease_seconds=LEASE)) == 1
    assert await trips(worker.renew(permits, T0, LEASE)) == 1
    assert await trips(worker.release("a", permits[0][1], T0, backoff_until=T0 + 5)) == 1
    assert await trips(worker.take_token(T0, 1.0, 1.0)) == 1


# -- robots.txt not read yet ------------------------------------------------------------------
async def test_a_worker_that_has_not_read_robots_txt_goes_alone_then_by_the_floor(
    workers: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    """A first download of a host takes its permit before robots.txt is read: with no
    worker having read it, the slot takes one such download at a time; the Crawl-delay
    that download read holds for everyone from its end, and is the floor of the delay of
    workers still blind."""
    a, b = workers
    kw: dict[str, Any] = {"concurrency": 8, "delay": 0, "lease_seconds": LEASE}
    first, _ = await a.acquire(HOST, T0, rules="blind", **kw)
    assert first is not None
    assert (await b.acquire(HOST, T0, rules="blind", **kw))[0] is None, "one at a time"
    assert await a.release(HOST, first, T0 + 0.3, backoff_until=T0 + 0.55, floor=0.25)
    assert (await b.acquire(HOST, T0 + 0.3, rules="blind", **kw))[1] == pytest.approx(0.25)
    second, _ = await b.acquire(HOST, T0 + 0.55, rules="blind", **kw)
    assert second is not None, "once the delay is over"
    # b's start took the floor as its delay: a, which has read robots.txt, waits for it.
    known = {**kw, "delay": 0.25}
    assert (await a.acquire(HOST, T0 + 0.55, rules="known", **known))[1] == pytest.approx(0.25)
    assert (await a.acquire(HOST, T0 + 0.8, rules="known", **known))[0] is not None
    with pytest.raises(ValueError, match="rules must be"):
        await a.acquire(HOST, T0, rules="maybe", **kw)
