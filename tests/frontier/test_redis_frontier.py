"""What the Redis frontier promises beyond the contract suite: queue kinds, several
workers on one job, fencing between them, hostile queue entries, key namespacing,
NOSCRIPT and restart recovery, and one round trip per operation.

These drive time with plain numbers (``time_source="caller"``); Redis's own clock, the
job's epoch and hostile records have their own modules."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest
from redis.asyncio import Redis

from skitter.exceptions import CodecError, ConfigError
from skitter.frontier import FrontierCounts, Lease, PushOutcome, RedisFrontier, TaskState
from skitter.http import Request
from skitter.redis import JobKeys
from skitter.testing._redis import RedisServer, redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

T0 = 1_700_000_000.0
LEASE = 30.0

Make = Callable[..., RedisFrontier]


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


async def urls(frontier: RedisFrontier, now: float = T0, owner: str = "") -> list[str]:
    return [lease.request.url for lease in await frontier.lease(1000, now, LEASE, owner)]


# -- queue kinds ------------------------------------------------------------------------------
async def test_fifo_ignores_priority_and_keeps_push_order(make: Make) -> None:
    frontier = make(kind="fifo")
    await frontier.push([req("a", priority=0), req("b", priority=9), req("c", priority=-1)], T0)
    await frontier.push([req("d", priority=5), req("a", priority=99)], T0)
    assert await urls(frontier) == [f"http://example.com/{p}" for p in "abcd"]


async def test_lifo_hands_out_the_newest_first(make: Make) -> None:
    frontier = make(kind="lifo")
    await frontier.push([req("a"), req("b", priority=9)], T0)
    await frontier.push([req("c", priority=-3)], T0)
    assert await urls(frontier) == [f"http://example.com/{p}" for p in "cba"]


async def test_fifo_puts_a_reclaimed_task_back_at_the_head(make: Make) -> None:
    frontier = make(kind="fifo")
    await frontier.push([req("a"), req("b")], T0)
    (first,) = await frontier.lease(1, T0, LEASE)
    assert await frontier.reclaim_expired(T0 + LEASE) == 1
    assert await urls(frontier, T0 + LEASE) == ["http://example.com/a", "http://example.com/b"]
    assert first.request.url == "http://example.com/a"


async def test_fifo_delayed_tasks_join_when_due(make: Make) -> None:
    frontier = make(kind="fifo")
    await frontier.push([req("late", exetime=T0 + 5), req("now")], T0)
    assert await urls(frontier, T0) == ["http://example.com/now"]
    assert await frontier.counts(T0 + 5) == FrontierCounts(ready=1, delayed=0, processing=1)
    assert await urls(frontier, T0 + 5) == ["http://example.com/late"]


async def test_a_job_keeps_its_queue_kind(make: Make) -> None:
    await make(kind="fifo").push([req("a")], T0)
    with pytest.raises(ConfigError, match="fifo"):
        await make(kind="priority").push([req("b")], T0)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        RedisFrontier("redis://127.0.0.1:1/0", project="p", job="j", kind="heap")  # type: ignore[arg-type]


# -- several workers on one job -----------------------------------------------------------------
async def test_concurrent_workers_never_lease_the_same_task(make: Make) -> None:
    workers = [make() for _ in range(4)]
    await workers[0].push([req(f"t{i}") for i in range(400)], T0)

    async def drain(frontier: RedisFrontier, name: str) -> list[str]:
        taken: list[str] = []
        while leases := await frontier.lease(7, T0, LEASE, owner=name):
            taken += [lease.taskid for lease in leases]
            await asyncio.sleep(0)  # let the other workers in between
        return taken

    results = await asyncio.gather(*(drain(w, f"w{i}") for i, w in enumerate(workers)))
    taken = [taskid for result in results for taskid in result]
    assert len(taken) == 400
    assert len(set(taken)) == 400
    assert all(results), "every worker got a share"
    assert await workers[1].counts(T0) == FrontierCounts(ready=0, delayed=0, processing=400)


async def test_a_reclaimed_lease_cannot_be_finished_by_its_old_holder(make: Make) -> None:
    w1, w2 = make(), make()
    await w1.push([req("a")], T0)
    (lease,) = await w1.lease(1, T0, LEASE, owner="w1")
    assert await w2.reclaim_expired(T0 + LEASE) == 1  # any worker puts it back
    (again,) = await w2.lease(1, T0 + LEASE, LEASE, owner="w2")
    assert again.taskid == lease.taskid
    assert not await w1.ack(lease, T0 + LEASE)
    assert not await w1.nack(lease, T0 + LEASE, None, "late")
    assert await w1.renew([lease], T0 + LEASE, LEASE) == 0
    assert await w2.ack(again, T0 + LEASE + 1)
    info = await w1.task(lease.taskid)
    assert info is not None
    assert (info.state, info.lastcrawltime) == (TaskState.SUCCESS, T0 + LEASE + 1)


async def test_a_stale_run_in_the_same_worker_cannot_settle_the_newer_lease(make: Make) -> None:
    frontier = make()
    await frontier.push([req("a")], T0)
    (stale,) = await frontier.lease(1, T0, LEASE, owner="w")
    await frontier.reclaim_expired(T0 + LEASE)
    # Same frontier object, same owner, same taskid: only the lease tells them apart.
    (current,) = await frontier.lease(1, T0 + LEASE, LEASE, owner="w")
    assert current.taskid == stale.taskid and current.token != stale.token
    assert await frontier.renew([stale], T0 + LEASE, LEASE) == 0
    assert not await frontier.ack(stale, T0 + LEASE)
    assert not await frontier.nack(stale, T0 + LEASE, T0 + 99, "stale")
    assert not await frontier.mark_bad(stale, T0 + LEASE, "stale")
    assert await frontier.counts(T0 + LEASE) == FrontierCounts(0, 0, 1)
    assert await frontier.renew([current], T0 + LEASE, LEASE) == 1
    assert await frontier.ack(current, T0 + LEASE)


# -- hostile entries --------------------------------------------------------------------------
class Shop:
    """A stand-in spider: records what ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def parse(self, response: object) -> None:
        self.ran.append("parse")


def wire(callback: str, url: str = "http://example.com/evil") -> bytes:
    """A payload in the codec's format naming ``callback``, as an attacker would write it."""
    fields = [1, url, "GET", None, b"", None, {}, {}, callback, None, 0, False, 0.0, None]
    return msgspec.msgpack.encode([*fields, -1, False, None, None])


async def test_stored_callbacks_come_back_bound_to_the_spider(make: Make) -> None:
    spider = Shop()
    frontier = make(spider=spider)
    await frontier.push([req("a", callback=spider.parse)], T0)
    (lease,) = await frontier.lease(1, T0, LEASE)
    assert lease.request.callback == spider.parse


async def test_a_callback_that_cannot_be_stored_changes_nothing(make: Make) -> None:
    frontier = make(spider=Shop())
    with pytest.raises(CodecError) as caught:
        await frontier.push([req("a"), req("b", callback=lambda r: None)], T0)
    assert caught.value.request is not None
    assert caught.value.request.url == "http://example.com/b"
    assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)


async def test_malicious_and_garbage_payloads_are_moved_aside_never_run(
    make: Make, client: Redis
) -> None:
    spider = Shop()
    frontier = make(spider=spider)
    await frontier.push([req("evil"), req("garbage"), req("good", callback=spider.parse)], T0)
    keys = frontier.keys
    await client.hset(keys.payloads, req("evil").taskid, wire("__init__"))
    await client.hset(keys.payloads, req("garbage").taskid, b"\xc1\x00garbage\xff")

    leases = await frontier.lease(10, T0, LEASE)

    assert [lease.request.url for lease in leases] == ["http://example.com/good"]
    assert spider.ran == []
    for path in ("evil", "garbage"):
        info = await frontier.task(req(path).taskid)
        assert info is not None
        assert info.state is TaskState.BAD
        assert "unreadable stored request" in info.reason
        assert info.url == f"http://example.com/{path}"
    bad = {entry.key: entry for entry in await frontier.bad_entries()}
    assert bad[req("evil").taskid.encode()].raw == wire("__init__")
    assert "__init__" in bad[req("evil").taskid.encode()].reason
    assert bad[req("garbage").taskid.encode()].raw == b"\xc1\x00garbage\xff"
    assert await frontier.counts(T0) == FrontierCounts(ready=0, delayed=0, processing=1)
    # The payloads are kept for requeue_bad: still never run while they stay bad.
    assert await frontier.requeue_bad(T0 + 1) == 2
    assert [lease.request.url for lease in await frontier.lease(10, T0 + 1, LEASE)] == []
    assert spider.ran == [] and len(await frontier.tasks(TaskState.BAD)) == 2


async def test_refused_payloads_do_not_shorten_a_lease_batch(make: Make, client: Redis) -> None:
    frontier = make()
    await frontier.push([req("bad1"), req("bad2"), req("ok1"), req("ok2")], T0)
    for path in ("bad1", "bad2"):
        await client.hset(frontier.keys.payloads, req(path).taskid, b"junk")
    leases = await frontier.lease(2, T0, LEASE)
    assert [lease.request.url for lease in leases] == [
        "http://example.com/ok1",
        "http://example.com/ok2",
    ]


@pytest.mark.parametrize("kind", ["priority", "fifo"])
async def test_foreign_queue_entries_are_moved_aside(make: Make, client: Redis, kind: str) -> None:
    frontier = make(kind=kind)
    await frontier.push([req("good")], T0)
    junk = [b"\xff\xfe not an entry", b"0000000000000001" + b"f" * 40]
    if kind == "priority":
        await client.zadd(frontier.keys.ready, {junk[0]: -10, junk[1]: -10})
    else:
        await client.lpush(frontier.keys.ready, *junk)

    assert await urls(frontier) == ["http://example.com/good"]
    bad = await frontier.bad_entries()
    assert sorted(entry.key for entry in bad) == sorted(junk)
    assert {entry.reason for entry in bad} == {"queue entry without a task record"}


async def test_an_unreadable_task_record_is_moved_aside(make: Make, client: Redis) -> None:
    frontier = make()
    await frontier.push([req("a"), req("b")], T0)
    taskid = req("a").taskid
    await client.hset(frontier.keys.tasks, taskid, b"\x93not a record")
    info = await frontier.task(taskid)
    assert info is not None
    assert info.reason == "unreadable task record"
    assert await urls(frontier) == ["http://example.com/b"]
    (entry,) = await frontier.bad_entries()
    assert (entry.key, entry.reason) == (taskid.encode(), "invalid task record (not a task record)")
    # A fresh push of the same request starts it over.
    assert await frontier.push([req("a")], T0) == [PushOutcome.NEW]


# -- namespacing ------------------------------------------------------------------------------
async def test_two_jobs_on_one_redis_do_not_see_each_other(make: Make) -> None:
    monday, tuesday = make(job="monday"), make(job="tuesday")
    other_project = make(project="other", job="monday")
    await monday.push([req("a"), req("b")], T0)
    assert await tuesday.push([req("a")], T0) == [PushOutcome.NEW]
    assert await other_project.counts(T0) == FrontierCounts(0, 0, 0)
    assert await urls(tuesday) == ["http://example.com/a"]
    assert await monday.counts(T0) == FrontierCounts(ready=2, delayed=0, processing=0)


def test_names_that_contain_the_separator_do_not_collide() -> None:
    left = JobKeys.for_job("a:b", "c")
    right = JobKeys.for_job("a", "b:c")
    assert left.ready != right.ready
    assert left.ready == "skitter:{a%3Ab:c}:ready"
    with pytest.raises(ValueError, match="job"):
        JobKeys.for_job("a", "")


@pytest.mark.parametrize(
    ("project", "job"),
    [("shop", "nightly"), ("a:b", "c"), ("a", "b:c"), ("{x}", "50% off"), ("é/ü", "j*b?[1]")],
)
def test_every_key_of_a_job_parses_back_to_its_project_and_job(project: str, job: str) -> None:
    keys = JobKeys.for_job(project, job, "pre")
    named = [*keys.all(), keys.permits("h:1"), keys.workers, keys.start_claim, keys.stats_max]
    for key in named:
        assert JobKeys.parse(key, "pre") == (project, job), key
        assert JobKeys.parse(key.encode(), "pre") == (project, job), key
    assert JobKeys.parse(keys.meta, "pre", name="meta") == (project, job)
    assert JobKeys.parse(keys.workers, "pre", name="meta") is None
    assert JobKeys.parse(keys.meta, "skitter") is None, "another prefix"
    assert (keys.tag, keys.name) == (keys.meta.removesuffix(":meta"), f"{project}/{job}")


@pytest.mark.parametrize(
    "key",
    [
        "skitter:{a:b}:x}:meta",  # what a SCAN pattern's * may match
        "skitter:{a%3ab:c}:meta",  # not escaped as skitter escapes
        "skitter:{a:b:c}:meta",
        "skitter:{ab}:meta",
        "skitter:{:b}:meta",
        "skitter:{a:b}",
        "skitter:{a:b}meta",
        "other:{a:b}:meta",
    ],
)
def test_keys_that_no_job_of_ours_has_parse_to_none(key: str) -> None:
    assert JobKeys.parse(key, name="meta" if key.endswith("meta") else None) is None


async def test_scan_patterns_find_a_jobs_keys(make: Make, client: Redis) -> None:
    frontier = make(project="a:b", job="j*b")
    await frontier.push([req("a")], T0)
    await client.set("skitter:{x:y}:meta", "not this job's")
    found = [key async for key in client.scan_iter(match=JobKeys.pattern("meta", "j*b"))]
    assert found == [frontier.keys.meta.encode()]
    every = {key async for key in client.scan_iter(match=JobKeys.pattern("meta"))}
    assert every == {frontier.keys.meta.encode(), b"skitter:{x:y}:meta"}


async def test_all_keys_of_a_job_share_one_cluster_slot(make: Make, client: Redis) -> None:
    frontier = make(project="shop", job="nightly")
    await frontier.push([req("a"), req("b", exetime=T0 + 9)], T0)
    await frontier.lease(1, T0, LEASE)
    keys = await client.keys("*")
    assert len(keys) >= 5, keys
    # Redis Cluster hashes only what lies between the first "{" and the next "}".
    tags = {key[key.index(b"{") + 1 : key.index(b"}")] for key in keys}
    assert tags == {b"shop:nightly"}


async def test_drop_deletes_the_job(make: Make, client: Redis) -> None:
    frontier = make()
    await frontier.push([req("a")], T0)
    await frontier.drop()
    assert await client.keys("*") == []
    assert await frontier.push([req("a")], T0) == [PushOutcome.NEW]


# -- recovery ---------------------------------------------------------------------------------
async def test_scripts_are_loaded_again_after_script_flush(make: Make, client: Redis) -> None:
    frontier = make()
    await frontier.push([req("a"), req("b")], T0)
    await client.script_flush()
    (lease,) = await frontier.lease(1, T0, LEASE)
    await client.script_flush()
    assert await frontier.ack(lease, T0)
    await client.script_flush()
    assert await frontier.counts(T0) == FrontierCounts(ready=1, delayed=0, processing=0)


async def test_a_restarted_redis_with_aof_keeps_the_queue() -> None:
    with RedisServer(aof=True) as server:
        frontier = RedisFrontier(server.url, project="p", job="j", time_source="caller")
        try:
            await frontier.push([req("a"), req("b", priority=3), req("c", exetime=T0 + 5)], T0)
            (lease,) = await frontier.lease(1, T0, LEASE, owner="w")
            await asyncio.to_thread(server.stop)
            await asyncio.to_thread(server.start)
            # The client reconnects; the scripts come back on NOSCRIPT; nothing was lost.
            assert await frontier.ack(lease, T0 + 1)
            assert await urls(frontier, T0 + 5) == ["http://example.com/a", "http://example.com/c"]
        finally:
            await frontier.close()


# -- precision and round trips ----------------------------------------------------------------
async def test_times_survive_redis_exactly(make: Make) -> None:
    frontier = make()
    now = 1_712_345_678.123456789
    await frontier.push([req("a", exetime=now + 0.000001)], now)
    assert await frontier.next_due() == now + 0.000001
    (lease,) = await frontier.lease(1, now + 0.000001, 0.1)
    assert lease.deadline == now + 0.000001 + 0.1
    assert await frontier.reclaim_expired(lease.deadline - 1e-6) == 0
    assert await frontier.reclaim_expired(lease.deadline) == 1
    (lease,) = await frontier.lease(1, now + 1, 1)
    assert await frontier.ack(lease, now + 2)
    info = await frontier.task(lease.taskid)
    assert info is not None
    assert info.lastcrawltime == now + 2


async def scripts_run(client: Redis, operation: Awaitable[object]) -> int:
    """How many EVALSHA Redis ran while ``operation`` ran."""

    async def calls() -> int:
        stats = await client.info("commandstats")
        return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))

    before = await calls()
    await operation
    return await calls() - before


async def test_each_operation_is_one_round_trip(make: Make, client: Redis) -> None:
    frontier = make()
    # Load every script once: the first call of each on a server costs a NOSCRIPT.
    await frontier.push([req("warm")], T0)
    (warm,) = await frontier.lease(1, T0, LEASE)
    await frontier.renew([warm], T0, LEASE)
    await frontier.ack(warm, T0)
    await frontier.counts(T0)

    evalsha_calls = functools.partial(scripts_run, client)
    assert await evalsha_calls(frontier.push([req(f"n{i}") for i in range(200)], T0)) == 1
    leases = await frontier.lease(100, T0, LEASE)
    assert len(leases) == 100
    assert await evalsha_calls(frontier.lease(100, T0, LEASE)) == 1
    assert await evalsha_calls(frontier.ack(leases[0], T0)) == 1
    assert await evalsha_calls(frontier.renew(leases, T0, 9)) == 1
    assert await evalsha_calls(frontier.counts(T0)) == 1
    assert await evalsha_calls(frontier.ack(Lease("x", req("x"), 0, T0), T0)) == 0


async def test_a_client_that_decodes_responses_is_refused(redis_url: str) -> None:
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        with pytest.raises(ConfigError, match="decode_responses"):
            RedisFrontier(client, project="p", job="j")
    finally:
        await client.aclose()


async def test_a_given_client_is_left_open(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    frontier = RedisFrontier(client, project="p", job="j")
    await frontier.push([req("a")], T0)
    await frontier.close()
    assert await client.ping()
    await client.aclose()


async def test_a_retried_failure_keeps_its_priority_and_leaves_the_failed_list(
    make: Make,
) -> None:
    frontier = make()
    await frontier.push([req("low", priority=1), req("high", priority=9)], T0)
    for lease in await frontier.lease(10, T0, LEASE):
        assert await frontier.nack(lease, T0 + 1, None, "HTTP 500")
    await frontier.push([req("middle", priority=5)], T0 + 2)
    assert await frontier.retry_failed(T0 + 3) == 2
    assert await frontier.tasks(TaskState.FAILED) == []
    assert await urls(frontier, T0 + 3) == [
        "http://example.com/high",
        "http://example.com/middle",
        "http://example.com/low",
    ]


async def test_a_failure_queued_again_by_a_push_is_no_longer_listed(make: Make) -> None:
    frontier = make()
    await frontier.push([req("a")], T0)
    [lease] = await frontier.lease(1, T0, LEASE)
    await frontier.nack(lease, T0 + 1, None, "HTTP 500")
    assert [t.url for t in await frontier.tasks(TaskState.FAILED)] == ["http://example.com/a"]
    outcome = await frontier.push([req("a")], T0 + 2, force=[True])
    assert outcome == [PushOutcome.RECRAWL]
    assert await frontier.tasks(TaskState.FAILED) == []
    assert await frontier.retry_failed(T0 + 3) == 0  # queued once, not twice
    assert await urls(frontier, T0 + 3) == ["http://example.com/a"]


async def test_retry_failed_by_domain_pages_through_a_long_list(make: Make) -> None:
    frontier = make()
    pages = [Request(f"http://{host}.example/{i}") for i in range(600) for host in ("a", "b")]
    await frontier.push(pages, T0)
    for lease in await frontier.lease(2000, T0, LEASE):
        await frontier.nack(lease, T0 + 1, None, "timeout")
    assert await frontier.retry_failed(T0 + 2, domain="b.example") == 600
    left = await frontier.tasks(TaskState.FAILED, limit=2000)
    assert len(left) == 600 and all(t.url.startswith("http://a.example/") for t in left)


async def test_bad_tasks_are_listed_most_recent_first(make: Make) -> None:
    frontier = make()
    await frontier.push([req("x"), req("y")], T0)
    for i, lease in enumerate(await frontier.lease(10, T0, LEASE)):
        await frontier.mark_bad(lease, T0 + 1 + i, f"forbidden {i}")
    bad = await frontier.tasks(TaskState.BAD)
    assert [t.reason for t in bad] == ["forbidden 1", "forbidden 0"]
    with pytest.raises(ValueError, match="SUCCESS"):
        await frontier.tasks(TaskState.SUCCESS)


async def test_leased_shows_every_workers_tasks_in_flight(make: Make) -> None:
    one, two = make(), make()
    await one.push([req("a"), req("b", priority=1)], T0)
    await one.lease(1, T0, LEASE, owner="w1")
    await two.lease(1, T0 + 5, LEASE, owner="w2")
    leased = await two.leased()
    assert [(t.url, t.owner, t.deadline) for t in leased] == [
        ("http://example.com/b", "w1", T0 + LEASE),
        ("http://example.com/a", "w2", T0 + 5 + LEASE),
    ]


async def test_links_a_worker_already_pushed_are_not_sent_again(make: Make, client: Redis) -> None:
    frontier = make(push_cache=100)
    await frontier.push([req("a"), req("b"), req("e", exetime=T0 + 100)], T0)
    outcomes = await frontier.push([req("a"), req("b"), req("c")], T0)
    assert outcomes == [PushOutcome.IGNORED, PushOutcome.IGNORED, PushOutcome.NEW]
    assert await scripts_run(client, frontier.push([req("a"), req("c")], T0)) == 0
    assert await frontier.counts(T0) == FrontierCounts(3, 1, 0)
    assert await scripts_run(client, frontier.push([req("e", exetime=T0 + 200)], T0)) == 0
    # What could change the stored task still goes to Redis.
    for request in (
        req("a", priority=5),  # a higher priority
        req("e", exetime=T0 + 50),  # an earlier exetime
        req("c", age=60),  # a recrawl rule
        req("c", itag="v2"),
    ):
        assert await scripts_run(client, frontier.push([request], T0)) == 1
    assert await scripts_run(client, frontier.push([req("d")], T0, force=[True])) == 1
    assert await scripts_run(client, frontier.push([req("d")], T0, force=[True])) == 1
    assert (await urls(frontier))[0] == "http://example.com/a"  # its priority was raised


async def test_the_push_cache_forgets_the_least_recently_used(make: Make, client: Redis) -> None:
    frontier = make(push_cache=10)
    await frontier.push([req(f"r{i}") for i in range(10)], T0)
    await frontier.push([req("r0")], T0)  # used again: the most recent now
    await frontier.push([req(f"s{i}") for i in range(5)], T0)  # r1, r2, ... forgotten
    assert await scripts_run(client, frontier.push([req("r0"), req("s4")], T0)) == 0
    assert await scripts_run(client, frontier.push([req("r1")], T0)) == 1
    assert await frontier.counts(T0) == FrontierCounts(15, 0, 0)


async def test_a_dropped_job_forgets_what_was_pushed(make: Make) -> None:
    frontier = make(push_cache=100)
    await frontier.push([req("a")], T0)
    await frontier.drop()
    assert await frontier.push([req("a")], T0) == [PushOutcome.NEW]


async def test_concurrent_acks_share_one_round_trip_and_are_fenced_one_by_one(
    make: Make, client: Redis
) -> None:
    frontier, other = make(), make()
    # Load the ack script first: the first call of a script on a server costs a NOSCRIPT,
    # which counts as an EVALSHA run (whether another test loaded it depends on the order).
    await frontier.push([req("warm")], T0)
    (warm,) = await frontier.lease(1, T0, LEASE)
    await frontier.ack(warm, T0)
    await frontier.push([req(f"a{i}") for i in range(10)], T0)
    leases = await frontier.lease(10, T0, LEASE)
    # The first lease expires and another worker takes it: its old holder is refused.
    await frontier.renew(leases[1:], T0 + LEASE - 1, LEASE)
    assert await other.reclaim_expired(T0 + LEASE + 1) == 1
    [taken] = await other.lease(1, T0 + LEASE + 1, LEASE)
    assert taken.taskid == leases[0].taskid
    answers: list[bool] = []

    async def ack_all() -> None:
        acks = (frontier.ack(lease, T0 + LEASE + 2) for lease in leases)
        answers.extend(await asyncio.gather(*acks))

    assert await scripts_run(client, ack_all()) == 1
    assert answers == [False] + [True] * 9
    assert await frontier.counts(T0 + LEASE + 2) == FrontierCounts(0, 0, 1)
    assert await other.ack(taken, T0 + LEASE + 3)


# -- the Bloom filter as the dupe filter ------------------------------------------------------
async def test_with_the_bloom_filter_successes_take_bits_not_records(
    make: Make, client: Redis
) -> None:
    frontier = make(dupefilter="bloom", bloom_capacity=1_000, bloom_error_rate=0.001)
    pages = [req(f"p{i}") for i in range(50)]
    await frontier.push(pages, T0)
    for lease in await frontier.lease(100, T0, LEASE):
        assert await frontier.ack(lease, T0 + 1)
    assert await client.hlen(frontier.keys.done) == 0
    assert await frontier.push(pages, T0 + 2) == [PushOutcome.IGNORED] * 50
    assert await frontier.push(pages[:1], T0 + 2, force=[True]) == [PushOutcome.RECRAWL]
    info = await frontier.task(pages[1].taskid)
    assert info is not None and info.state is TaskState.SUCCESS
    stats = await frontier.dupefilter_stats()
    assert stats["dupefilter/bloom/count"] == 50
    assert 0 < stats["dupefilter/bloom/false_positive_rate"] < 1e-6
    assert stats["dupefilter/bloom/memory_bytes"] == frontier.bloom.shape.memory_bytes  # type: ignore[union-attr]


async def test_with_the_bloom_filter_a_failure_keeps_its_record_until_it_succeeds(
    make: Make, client: Redis
) -> None:
    frontier = make(dupefilter="bloom", bloom_capacity=1_000)
    await frontier.push([req("flaky")], T0)
    [lease] = await frontier.lease(1, T0, LEASE)
    await frontier.nack(lease, T0 + 1, None, "HTTP 500")
    [failed] = await frontier.tasks(TaskState.FAILED)
    assert (failed.url, failed.reason) == ("http://example.com/flaky", "HTTP 500")
    assert await frontier.retry_failed(T0 + 2) == 1
    [lease] = await frontier.lease(1, T0 + 2, LEASE)
    assert await frontier.ack(lease, T0 + 3)
    assert await client.hlen(frontier.keys.done) == 0
    assert await frontier.push([req("flaky")], T0 + 4) == [PushOutcome.IGNORED]


async def test_with_the_bloom_filter_age_and_itag_do_not_recrawl_and_say_so(
    make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    frontier = make(dupefilter="bloom", bloom_capacity=1_000)
    await frontier.push([req("a")], T0)
    [lease] = await frontier.lease(1, T0, LEASE)
    await frontier.ack(lease, T0)
    with caplog.at_level("WARNING", logger="skitter.frontier.redis"):
        again = await frontier.push([req("a", age=0), req("a", itag="v2")], T0 + 10)
        await frontier.push([req("a", age=0)], T0 + 10)
    assert again == [PushOutcome.IGNORED, PushOutcome.IGNORED]
    warnings = [r.getMessage() for r in caplog.records if "Bloom filter" in r.getMessage()]
    assert len(warnings) == 1 and "REDIS_DUPEFILTER='exact'" in warnings[0]


async def test_workers_with_differently_sized_bloom_filters_are_refused(make: Make) -> None:
    await make(dupefilter="bloom", bloom_capacity=1_000).push([req("a")], T0)
    other = make(dupefilter="bloom", bloom_capacity=50_000)
    with pytest.raises(ConfigError, match="created with bits="):
        await other.push([req("b")], T0)
