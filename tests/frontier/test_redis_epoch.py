"""The job's epoch: written when the job is created, checked by every script. State lost
in Redis (a restart without persistence, FLUSHDB, eviction, a failover to an empty
replica) is JobStateLost everywhere, never an empty queue that looks finished, and never
a new job made on the fly."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.exceptions import FatalError, JobStateLost
from skitter.frontier import FrontierCounts, PushOutcome, RedisFrontier
from skitter.http import Request
from skitter.testing._redis import RedisServer, redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

T0 = 1_700_000_000.0
LEASE = 30.0

Make = Callable[..., RedisFrontier]
LOST = r"job state lost \(Redis restarted without persistence\?\): job 'j' on redis://127\.0\.0\.1:\d+/0"


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


async def test_a_job_is_created_once_and_joined_after(make: Make, client: Redis) -> None:
    first, second = make(), make()
    assert await first.open_job() is True
    assert first.opened == "created" and first.epoch
    assert await second.open_job() is False
    assert (second.opened, second.epoch) == ("joined", first.epoch)
    assert await client.hget(first.keys.meta, "epoch") == first.epoch.encode()


async def test_a_frontier_that_may_not_create_refuses_a_missing_job(
    make: Make, client: Redis
) -> None:
    reader = make(create=False)
    with pytest.raises(JobStateLost, match="no job 'j' for spider 'p' on redis://"):
        await reader.open_job()
    with pytest.raises(JobStateLost, match="no job"):
        await reader.push([req("a")], T0)
    assert await client.keys("*") == [], "nothing was created"
    await make().push([req("a")], T0)
    assert await reader.counts(T0) == FrontierCounts(1, 0, 0)


def every_script(frontier: RedisFrontier, lease: Any) -> list[Callable[[], Awaitable[Any]]]:
    return [
        lambda: frontier.push([req("new")], T0),
        lambda: frontier.lease(10, T0, LEASE),
        lambda: frontier.ack(lease, T0),
        lambda: frontier.nack(lease, T0, T0 + 5, "again"),
        lambda: frontier.mark_bad(lease, T0, "bad"),
        lambda: frontier.renew([lease], T0, LEASE),
        lambda: frontier.reclaim_expired(T0 + LEASE),
        lambda: frontier.counts(T0),
        lambda: frontier.retry_failed(T0),
        lambda: frontier.requeue_bad(T0),
    ]


@pytest.mark.parametrize("loss", ["FLUSHDB", "DEL meta"])
async def test_every_script_refuses_a_job_whose_state_vanished(
    make: Make, client: Redis, loss: str
) -> None:
    frontier = make()
    await frontier.push([req("a"), req("b")], T0)
    (lease,) = await frontier.lease(1, T0, LEASE)
    if loss == "FLUSHDB":
        await client.flushdb()
    else:  # eviction takes keys one by one
        await client.delete(frontier.keys.meta)
    before = sorted(await client.keys("*"))
    for call in every_script(frontier, lease):
        with pytest.raises(JobStateLost, match=LOST + " has no epoch"):
            await call()
    assert sorted(await client.keys("*")) == before, "a refused script changes nothing"
    assert issubclass(JobStateLost, FatalError)


async def test_a_job_created_again_is_another_epoch_to_its_old_workers(
    make: Make, client: Redis
) -> None:
    old, other = make(), make()
    await old.push([req("a")], T0)
    (lease,) = await old.lease(1, T0, LEASE)
    await other.drop()  # REDIS_FLUSH_ON_START of a new run
    await other.push([req("z")], T0)  # ... which created the job again
    assert other.epoch != old.epoch
    for call in every_script(old, lease):
        with pytest.raises(JobStateLost, match=LOST + " has a new epoch"):
            await call()
    with pytest.raises(JobStateLost, match="a new epoch"):
        await old.open_job()  # it never joins the new one
    assert await other.counts(T0) == FrontierCounts(1, 0, 0)


async def test_a_job_cleared_at_its_end_keeps_its_epoch_for_the_workers_still_finishing(
    make: Make, client: Redis
) -> None:
    last, finishing = make(), make()
    await last.push([req("a")], T0)
    (lease,) = await last.lease(1, T0, LEASE)
    await last.ack(lease, T0)
    await finishing.open_job()
    await last.drop(keep_epoch=60)
    assert await client.keys("*") == [last.keys.meta.encode()]
    assert 0 < await client.pttl(last.keys.meta) <= 60_000
    assert await finishing.counts(T0) == FrontierCounts(0, 0, 0)  # done, not lost
    # a new run joins it and keeps it for good
    assert await make().push([req("a")], T0 + 1) == [PushOutcome.NEW]
    assert await client.pttl(last.keys.meta) == -1


async def test_a_job_of_an_older_skitter_is_adopted(make: Make, client: Redis) -> None:
    keys = make().keys
    await client.hset(keys.meta, mapping={"kind": "priority", "version": 1, "seq": 7})
    await client.hset(keys.done, "t" * 40, b"1700000000.0")
    frontier = make()
    assert await frontier.open_job() is False
    assert frontier.opened == "adopted"
    assert await frontier.push([req("a")], T0) == [PushOutcome.NEW]


async def test_a_restart_without_persistence_is_job_state_lost(make: Make) -> None:
    with RedisServer(aof=False) as server:
        frontier = make(url=server.url)
        await frontier.push([req("a"), req("b")], T0)
        (lease,) = await frontier.lease(1, T0, LEASE)
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)
        with pytest.raises(JobStateLost, match="has no epoch"):
            await frontier.ack(lease, T0)
        with pytest.raises(JobStateLost, match="has no epoch"):
            await frontier.counts(T0)  # empty: but lost, not finished
