"""A job split over shards (REDIS_SHARDS, ``--shards N``): each host's keys on one
shard, leases from every shard in turn, one shard count per job, a lost shard noticed.
The contract suite on shards is in test_redis_contract.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.exceptions import ConfigError, JobStateLost
from skitter.frontier import RedisFrontier, TaskState
from skitter.frontier.redis import ShardedRedisFrontier
from skitter.http import Request, url_host
from skitter.redis import JobKeys
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

HOSTS = [f"h{i}.example" for i in range(8)]


@pytest.fixture
async def sharded(redis_url: str) -> AsyncIterator[Callable[..., ShardedRedisFrontier]]:
    made: list[ShardedRedisFrontier] = []

    def factory(**kwargs: Any) -> ShardedRedisFrontier:
        kwargs.setdefault("project", "p")
        kwargs.setdefault("job", "j")
        kwargs.setdefault("time_source", "caller")
        kwargs.setdefault("shards", 2)
        frontier = ShardedRedisFrontier(redis_url, **kwargs)
        made.append(frontier)
        return frontier

    yield factory
    for frontier in made:
        await frontier.close()


def _master(slot: int, masters: int) -> int:
    """Which of ``masters`` owns ``slot`` as ``redis-cli --cluster create`` shares them."""
    return next(m for m in range(masters) if slot < round((m + 1) * 16384 / masters))


@pytest.mark.parametrize(("masters", "per_master"), [(3, 1), (3, 2), (4, 1), (5, 2)])
def test_shards_share_the_masters_evenly_whatever_the_jobs_name(
    masters: int, per_master: int
) -> None:
    from collections import Counter

    from redis.crc import key_slot

    for job in range(100):
        keys = JobKeys.for_job("shop", f"job-{job}", shards=masters * per_master)
        owners = Counter(_master(key_slot(tag.encode()), masters) for tag in keys.shards)
        assert sorted(owners.values()) == [per_master] * masters, (job, owners)


def _on(keys: JobKeys, host: str) -> str:
    return keys.shards[keys.shard_of(host)]


def test_shard_tags_are_no_jobs_and_spread_over_the_cluster_slots() -> None:
    from redis.crc import key_slot

    keys = JobKeys.for_job("shop", "nightly", shards=4)
    assert keys.shards[0] == keys.tag == "skitter:{shop:nightly}"
    assert len(set(keys.shards)) == 4
    quarters = [key_slot(tag.encode()) * 4 // 16384 for tag in keys.shards]
    home = quarters[0]  # shard 0's, then the next quarters in turn: a quarter each
    assert quarters == [(home + k) % 4 for k in range(4)]
    for index, tag in enumerate(keys.shards[1:], start=1):  # never read as a job's keys
        assert JobKeys.parse(f"{tag}:meta", name="meta") is None
        shard = keys.shard(index)
        assert shard.tasks == f"{tag}:tasks"
        assert shard.control == keys.control  # the job-wide keys stay shard 0's
    assert {keys.shard_of(host) for host in HOSTS} == {0, 1, 2, 3}


async def test_each_hosts_tasks_and_slot_keys_live_on_its_shard(
    sharded: Callable[..., ShardedRedisFrontier], client: Redis
) -> None:
    frontier = sharded(shards=3)
    requests = [Request(f"http://{host}/{n}") for host in HOSTS for n in range(3)]
    await frontier.push(requests, 0.0)
    leases = await frontier.lease(len(requests), 0.0, 60.0)
    assert len(leases) == len(requests)
    for lease in leases[::2]:
        assert await frontier.ack(lease, 1.0)
    keys = frontier.keys
    for request in requests:
        host = url_host(request.url)
        home = _on(keys, host)
        for tag in keys.shards:  # its record, payload or outcome on its shard only
            queued = await client.hexists(f"{tag}:tasks", request.taskid)
            held = queued or await client.hexists(f"{tag}:done", request.taskid)
            assert bool(held) == (tag == home), (request.url, tag)
        assert keys.permits(host).startswith(home + ":")
        assert keys.pace(host).startswith(home + ":")
        assert keys.robots(f"http://{host}:8080").startswith(home + ":")


async def test_leases_come_from_every_shard_in_turn(
    sharded: Callable[..., ShardedRedisFrontier],
) -> None:
    frontier = sharded()
    keys = frontier.keys
    first = next(h for h in HOSTS if keys.shard_of(h) == 0)
    second = next(h for h in HOSTS if keys.shard_of(h) == 1)
    # the first host's tasks have the higher priority: a single queue would drain it first
    await frontier.push([Request(f"http://{first}/{n}", priority=9) for n in range(4)], 0.0)
    await frontier.push([Request(f"http://{second}/{n}") for n in range(4)], 0.0)
    hosts = [url_host((await frontier.lease(1, 0.0, 60.0))[0].request.url) for _ in range(4)]
    assert sorted(hosts[:2]) == sorted([first, second])  # both shards served at once
    assert hosts[2:] == hosts[:2]  # and again, in the same turn
    rest = await frontier.lease(10, 0.0, 60.0)  # one call takes what every shard has
    assert len(rest) == 4
    assert {url_host(lease.request.url) for lease in rest} == {first, second}


async def test_settling_goes_to_the_shard_that_leased(
    sharded: Callable[..., ShardedRedisFrontier],
) -> None:
    frontier = sharded()
    await frontier.push([Request(f"http://{host}/x") for host in HOSTS], 0.0)
    leases = await frontier.lease(len(HOSTS), 0.0, 60.0)
    assert await frontier.renew(leases, 1.0, 60.0) == len(HOSTS)
    ok, failed = leases[: len(HOSTS) // 2], leases[len(HOSTS) // 2 :]
    for lease in ok:
        assert await frontier.ack(lease, 2.0)
    for lease in failed:
        assert await frontier.nack(lease, 2.0, None, "HTTP 500")
    assert not await frontier.ack(failed[0], 3.0)  # settled: refused, on its own shard
    listed = await frontier.tasks(TaskState.FAILED)
    assert {info.taskid for info in listed} == {lease.taskid for lease in failed}
    assert await frontier.finished_counts() == (len(failed), 0, 0)
    assert await frontier.retry_failed(3.0) == len(failed)
    counts = await frontier.counts(3.0)
    assert (counts.ready, counts.processing) == (len(failed), 0)


async def test_a_job_keeps_the_number_of_shards_it_was_made_with(
    sharded: Callable[..., ShardedRedisFrontier], make: Callable[..., RedisFrontier]
) -> None:
    await sharded().push([Request(f"http://{host}/x") for host in HOSTS], 0.0)
    with pytest.raises(ConfigError, match="created with 2 shard"):
        await sharded(shards=3).open_job()
    with pytest.raises(ConfigError, match="created with 2 shard"):
        await make().open_job()  # a single-shard worker would crawl half the job
    reader = sharded(shards=None, create=False, kind=None)  # push, job, the dashboard
    assert (await reader.counts(0.0)).ready == len(HOSTS)
    assert reader.shards == 2


async def test_a_shard_made_again_empty_is_job_state_lost(
    sharded: Callable[..., ShardedRedisFrontier], client: Redis
) -> None:
    """Shard 1's node restarted empty: a worker joining would make it again, with a new
    epoch; neither it nor a worker that joined before may go on with half the job."""
    joined = sharded()
    await joined.push([Request(f"http://{host}/x") for host in HOSTS], 0.0)
    lost = [key async for key in client.scan_iter(match=f"{_glob(joined.keys.shards[1])}:*")]
    assert lost
    await client.delete(*lost)
    with pytest.raises(JobStateLost, match="shard 1"):
        await sharded().open_job()
    with pytest.raises(JobStateLost):
        await joined.lease(len(HOSTS), 0.0, 60.0)


async def test_a_dropped_job_starts_again_on_every_shard(
    sharded: Callable[..., ShardedRedisFrontier], client: Redis
) -> None:
    frontier = sharded()
    await frontier.push([Request(f"http://{host}/x") for host in HOSTS], 0.0)
    await frontier.drop()
    assert not [key async for key in client.scan_iter(match="skitter:*")]
    assert (await frontier.push([Request("http://h1.example/y")], 0.0))[0].name == "NEW"
    assert (await frontier.counts(0.0)).ready == 1


def _glob(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def test_workers_and_push_take_shards_and_refuse_nonsense() -> None:
    from skitter.cli._main import _build_parser
    from skitter.cli._redis_option import target_settings

    parser = _build_parser()
    worker = ["worker", "s.py", "--job", "j", "--redis", "redis://127.0.0.1:7000/0"]
    assert target_settings(parser.parse_args([*worker, "--shards", "4"])) == {"REDIS_SHARDS": 4}
    assert target_settings(parser.parse_args(worker)) == {}
    for bad in ("0", "x", "5000"):
        with pytest.raises(SystemExit):
            parser.parse_args([*worker, "--shards", bad])
    push = ["push", "http://127.0.0.1/", "--job", "j", "--spider", "s", "--shards", "2"]
    assert parser.parse_args([*push, "--create"]).shards == 2
    for command in ("dashboard", "job"):  # they read the job's own
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--job", "j", "--shards", "2"])


async def test_push_refuses_shards_without_create(redis_url: str) -> None:
    import asyncio
    import sys

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "push", "http://127.0.0.1:9/a", "--redis", redis_url,
        "--spider", "p", "--job", "nocreate", "--shards", "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out = (await asyncio.wait_for(proc.communicate(), timeout=30))[0].decode()
    assert proc.returncode == 2, out
    assert "--shards is for a job that --create makes" in out


async def test_a_reader_that_forgets_a_lost_job_learns_its_new_shards(
    sharded: Callable[..., ShardedRedisFrontier],
) -> None:
    """The dashboard: a job flushed and made again with more shards is lost to it once,
    then read whole."""
    first = sharded(shards=1)
    await first.push([Request("http://h0.example/x")], 0.0)
    reader = sharded(shards=None, create=False, kind=None)
    assert (await reader.counts(0.0)).ready == 1
    await first.drop()
    again = sharded(shards=2)
    await again.push([Request(f"http://{host}/y") for host in HOSTS], 0.0)
    with pytest.raises(JobStateLost):
        await reader.counts(0.0)
    reader.forget()
    assert (await reader.counts(0.0)).ready == len(HOSTS)
    assert reader.shards == 2


async def test_a_shard_out_of_reach_does_not_hold_back_the_leases_of_the_others(
    sharded: Callable[..., ShardedRedisFrontier],
) -> None:
    from skitter.exceptions import FrontierUnavailable

    frontier = sharded()
    await frontier.push([Request(f"http://{host}/x") for host in HOSTS], 0.0)
    down = frontier.parts[1]

    async def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise FrontierUnavailable("shard 1's master is being replaced")

    down.lease = unavailable  # type: ignore[method-assign]  # an outage of one shard only
    mine = sum(frontier.keys.shard_of(host) == 0 for host in HOSTS)
    for _ in range(2):  # whichever shard's turn it is first
        leases = await frontier.lease(len(HOSTS), 0.0, 60.0)
        assert all(frontier.keys.shard_of(url_host(x.request.url)) == 0 for x in leases)
        if leases:
            assert len(leases) == mine  # not lost in the worker: handed out
            break
    with pytest.raises(FrontierUnavailable):  # nothing else to hand out: the outage shows
        await frontier.lease(len(HOSTS), 0.0, 60.0)
