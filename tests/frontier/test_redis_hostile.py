"""Records anyone with write access to the Redis can plant: infinite or NaN numbers,
wrong types, unknown states, scores no worker writes. None of them may stop a lease or
crash a read path; each is moved aside (counted, logged once per reason) and the crawl
goes on with the valid tasks. The bad hash they go to is bounded."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from redis.asyncio import Redis

from skitter.engine import Stats
from skitter.frontier import FrontierCounts, PushOutcome, RedisFrontier, TaskState
from skitter.http import Request
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

T0 = 1_700_000_000.0
LEASE = 30.0
INF, NAN = float("inf"), float("nan")

Make = Callable[..., RedisFrontier]


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


async def tamper(
    client: Redis, frontier: RedisFrontier, taskid: str, field: int, value: Any
) -> None:
    """Rewrite one field of a stored task record, as an attacker would."""
    record = msgspec.msgpack.decode(await client.hget(frontier.keys.tasks, taskid))
    record[field] = value
    await client.hset(frontier.keys.tasks, taskid, msgspec.msgpack.encode(record))


# Fields of a task record: seq, priority, retried, where, when, owner, token, reason, itag,
# age, auto_recrawl, url.
PLANTED = [
    pytest.param(1, INF, "priority", id="priority-inf"),
    pytest.param(1, NAN, "priority", id="priority-nan"),
    pytest.param(1, -(2.0**60), "priority", id="priority-beyond-2**53"),
    pytest.param(0, INF, "seq", id="seq-inf"),
    pytest.param(0, 1.5, "seq", id="seq-fraction"),
    pytest.param(2, NAN, "retried", id="retried-nan"),
    pytest.param(2, -1, "retried", id="retried-negative"),
    pytest.param(3, 7, "where", id="where-unknown"),
    pytest.param(4, NAN, "when", id="when-nan"),
    pytest.param(9, INF, "age", id="age-inf"),
    pytest.param(10, "yes", "auto_recrawl", id="auto-not-bool"),
    pytest.param(11, 5, "reason or url", id="url-not-str"),
]


@pytest.mark.parametrize(("field", "value", "what"), PLANTED)
async def test_a_planted_record_is_moved_aside_and_every_valid_task_is_leased(
    make: Make, client: Redis, caplog: pytest.LogCaptureFixture, field: int, value: Any, what: str
) -> None:
    stats = Stats()
    frontier = make(stats=stats)
    await frontier.push([req("a"), req("b", priority=1), req("c")], T0)
    await tamper(client, frontier, req("b").taskid, field, value)
    with caplog.at_level(logging.WARNING, logger="skitter.frontier.redis"):
        leases = await frontier.lease(10, T0, LEASE)
    assert sorted(lease.request.url for lease in leases) == [
        "http://example.com/a",
        "http://example.com/c",
    ]
    (entry,) = await frontier.bad_entries()
    assert entry.key == req("b").taskid.encode()
    assert entry.reason == f"invalid task record ({what})"
    assert stats.get("frontier/quarantined") == 1
    assert [r for r in caplog.records if "moved" in r.getMessage()], "a warning in the log"
    assert await frontier.quarantine_counts() == (1, 0)
    for lease in leases:
        assert await frontier.ack(lease, T0)
    assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)


@pytest.mark.parametrize(("field", "value", "what"), PLANTED)
async def test_read_paths_survive_a_planted_record(
    make: Make, client: Redis, field: int, value: Any, what: str
) -> None:
    """task(), tasks() and leased() serve the dashboard and skitter job: they show the
    rest and never raise."""
    frontier = make()
    await frontier.push([req("a"), req("b")], T0)
    await frontier.lease(10, T0, LEASE, owner="w")
    await tamper(client, frontier, req("b").taskid, field, value)
    assert [t.url for t in await frontier.leased()] in (
        ["http://example.com/a"],
        ["http://example.com/a", "http://example.com/b"],  # the field Python does not read
    )
    info = await frontier.task(req("b").taskid)
    assert info is not None and info.state is TaskState.ACTIVE
    assert await frontier.tasks(TaskState.FAILED) == []


async def test_the_same_reason_is_logged_once(
    make: Make, client: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    stats = Stats()
    frontier = make(stats=stats)
    await frontier.push([req(f"t{i}") for i in range(6)], T0)
    for i in range(5):
        await tamper(client, frontier, req(f"t{i}").taskid, 1, INF)
    with caplog.at_level(logging.WARNING, logger="skitter.frontier.redis"):
        leases = await frontier.lease(10, T0, LEASE)
    assert [lease.request.url for lease in leases] == ["http://example.com/t5"]
    assert stats.get("frontier/quarantined") == 5
    assert len([r for r in caplog.records if "moved" in r.getMessage()]) == 1


async def test_planted_scores_stop_neither_lease_nor_the_end_of_the_crawl(
    make: Make, client: Redis
) -> None:
    frontier = make()
    await frontier.push([req("a"), req("b"), req("later", exetime=T0 + 5)], T0)
    keys = frontier.keys
    # an entry of no task at -inf (leased first), and one at +inf (leased last)
    await client.zadd(keys.ready, {b"%016x" % 99 + b"x" * 40: float("-inf")})
    await client.zadd(keys.ready, {b"%016x" % 98 + b"y" * 40: INF})
    (a, b) = await frontier.lease(2, T0, LEASE)
    assert (a.request.url, b.request.url) == ("http://example.com/a", "http://example.com/b")
    assert await frontier.ack(b, T0)
    # a live lease and a delayed task scored +inf: never expired, never due, never done
    [processing] = await client.zrange(keys.processing, 0, -1)
    await client.zadd(keys.processing, {processing: INF}, xx=True)
    [delayed] = await client.zrange(keys.delayed, 0, -1)
    await client.zadd(keys.delayed, {delayed: INF}, xx=True)
    assert await frontier.next_due() is None  # +inf is no exetime
    assert await frontier.reclaim_expired(T0 + LEASE) == 1  # scores restored from records
    assert await frontier.next_due() == T0 + 5
    leased = await frontier.lease(10, T0 + LEASE, LEASE)
    assert [lease.request.url for lease in leased] == [
        "http://example.com/a",
        "http://example.com/later",
    ]
    assert {e.reason for e in await frontier.bad_entries()} == {"queue entry without a task record"}


async def test_a_planted_finished_record_is_moved_aside_and_the_task_counts_as_new(
    make: Make, client: Redis
) -> None:
    frontier = make()
    keys = frontier.keys
    await frontier.push([req("seed")], T0)  # the job exists
    outcomes = {
        "nan-time": msgspec.msgpack.encode([2, NAN, False, 0, "", "", 0, -1.0, False]),
        "unknown-state": msgspec.msgpack.encode([9, T0, False, 0, "", "", 0, -1.0, False]),
        "retried-inf": msgspec.msgpack.encode([3, T0, False, INF, "x", "u", 0, -1.0, False]),
        "inf-time": b"inf",
        "garbage": b"\x93\xc1",
    }
    for path, raw in outcomes.items():
        await client.hset(keys.done, req(path).taskid, raw)
        await client.zadd(keys.failed, {req(path).taskid: T0})
    # the read paths leave them out, and do not raise
    assert await frontier.tasks(TaskState.FAILED) == []
    for path in outcomes:
        assert await frontier.task(req(path).taskid) is None
    # a push does not take them for crawled: each is moved aside and queued afresh
    pushed = await frontier.push([req(path) for path in outcomes], T0)
    assert pushed == [PushOutcome.NEW] * len(outcomes)
    assert len(await frontier.bad_entries()) == len(outcomes)
    # retry_failed drops the stale index entries it finds
    assert await frontier.retry_failed(T0) == 0
    assert await client.zcard(keys.failed) == 0


async def test_the_bad_hash_keeps_the_newest_and_counts_the_dropped(
    make: Make, client: Redis
) -> None:
    frontier = make(bad_max=3)
    await frontier.push([req("good")], T0)
    junk = [b"%016x" % i + b"z" * 40 for i in range(5)]
    await client.zadd(frontier.keys.ready, {entry: -10.0 for entry in junk})
    assert [lease.request.url for lease in await frontier.lease(10, T0, LEASE)] == [
        "http://example.com/good"
    ]
    assert sorted(e.key for e in await frontier.bad_entries()) == junk[2:]  # the newest
    assert await frontier.quarantine_counts() == (5, 2)
    assert await client.zcard(frontier.keys.bad_order) == 3


async def test_a_bad_hash_of_zero_keeps_nothing_but_counts(make: Make, client: Redis) -> None:
    frontier = make(bad_max=0)
    await frontier.push([req("good")], T0)
    await client.zadd(frontier.keys.ready, {b"%016x" % 7 + b"q" * 40: -10.0})
    await frontier.lease(10, T0, LEASE)
    assert await frontier.bad_entries() == []
    assert await frontier.quarantine_counts() == (1, 1)


def test_a_negative_bad_max_is_refused() -> None:
    with pytest.raises(ValueError, match="bad_max"):
        RedisFrontier("redis://127.0.0.1:1/0", project="p", job="j", bad_max=-1)


def test_a_worker_refuses_a_negative_redis_bad_max_at_start() -> None:
    from skitter import Crawler, Spider
    from skitter.exceptions import ConfigError

    class Quiet(Spider):
        name = "quiet"

    crawler = Crawler(Quiet, {"REDIS_BAD_MAX": -1}, redis_url="redis://127.0.0.1:1/0", job="j")
    with pytest.raises(ConfigError, match="bad_max must be an integer >= 0, got -1"):
        crawler.build()
