"""What a Redis that misbehaves means, on a real redis-server put in each state.

Out of memory (maxmemory with ``noeviction``), MISCONF (a snapshot that cannot be
written, with ``stop-writes-on-bgsave-error``), READONLY (a replica) and LOADING (a big
dataset loading) are Redis unavailable for now: every component that talks to Redis
raises ``FrontierUnavailable`` (or waits), which the engine rides out. A wrong password,
a missing one and an ACL user without rights are refused: a ``FatalError`` mid-crawl, a
``ConfigError`` naming the masked URL at start, never an endless "unavailable".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from skitter.cluster import ClusterJob, JobControl, RedisStats, StartClaim
from skitter.engine import Stats
from skitter.exceptions import ConfigError, FatalError, FrontierUnavailable
from skitter.frontier import RedisFrontier
from skitter.http import Request
from skitter.redis import JobKeys, check_access
from skitter.settings import Settings
from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server

PASSWORD = "s3cret-Passw0rd"


@pytest.fixture
def server() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


@pytest.fixture
async def admin(server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(server.url)
    yield client
    await client.aclose()


def req(n: int) -> Request:
    return Request(f"http://example.com/{n}")


# -- the states ---------------------------------------------------------------------------
async def out_of_memory(admin: Redis, server: RedisServer) -> Callable[[], Awaitable[None]]:
    await admin.config_set("maxmemory-policy", "noeviction")
    await admin.config_set("maxmemory", "1")

    async def lift() -> None:
        await admin.config_set("maxmemory", "0")

    return lift


async def bgsave_status(admin: Redis, status: str) -> bool:
    """Whether Redis's last snapshot ended in ``status``: another process's state, polled."""
    return bool((await admin.info("persistence"))["rdb_last_bgsave_status"] == status)


async def misconf(admin: Redis, server: RedisServer) -> Callable[[], Awaitable[None]]:
    """A snapshot that cannot be written: ``dump.rdb`` is a directory."""
    blocker = server.directory / "dump.rdb"
    blocker.mkdir()
    await admin.config_set("save", "3600 1")
    await admin.config_set("stop-writes-on-bgsave-error", "yes")
    await admin.bgsave()
    await wait_until(lambda: bgsave_status(admin, "err"))

    async def lift() -> None:
        blocker.rmdir()
        await admin.bgsave()
        await wait_until(lambda: bgsave_status(admin, "ok"))

    return lift


@contextlib.asynccontextmanager
async def replica_of_another(
    admin: Redis, server: RedisServer
) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    with RedisServer(binary=require_redis_server()) as master:
        await admin.replicaof("127.0.0.1", str(master.port))

        async def lift() -> None:
            await admin.replicaof("NO", "ONE")

        try:
            yield lift
        finally:
            await admin.replicaof("NO", "ONE")


@contextlib.asynccontextmanager
async def state(
    name: str, admin: Redis, server: RedisServer
) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    if name == "READONLY":
        async with replica_of_another(admin, server) as lift:
            yield lift
        return
    lift = await (out_of_memory if name == "OOM" else misconf)(admin, server)
    try:
        yield lift
    finally:
        with contextlib.suppress(Exception):
            await lift()


STATES = ["OOM", "MISCONF", "READONLY"]


@pytest.mark.parametrize("name", STATES)
async def test_the_frontier_reports_a_redis_that_refuses_writes_as_unavailable(
    server: RedisServer, admin: Redis, name: str
) -> None:
    frontier = RedisFrontier(server.url, project="shop", job="nightly")
    try:
        await frontier.push([req(0)], time.time())
        (held,) = await frontier.lease(1, time.time(), 30)
        async with state(name, admin, server) as lift:
            with pytest.raises(FrontierUnavailable, match=f"Redis for shop/nightly .*{name}"):
                await frontier.push([req(1)], time.time())
            if name != "OOM":  # under OOM Redis still runs a script whose first write frees
                with pytest.raises(FrontierUnavailable, match=name):
                    await frontier.ack(held, time.time())  # the batched ack
            await lift()
            assert await frontier.push([req(1)], time.time())
        # the task whose ack failed is left to its lease, neither done nor lost
        assert (await frontier.counts(time.time())).processing == 1
    finally:
        await frontier.close()


@pytest.mark.parametrize("name", STATES)
async def test_the_cluster_gates_and_stats_report_it_too_and_lose_no_counts(
    server: RedisServer, admin: Redis, name: str
) -> None:
    cluster = ClusterJob(server.url, "nightly")
    frontier = cluster.make_frontier(type("S", (), {"name": "shop"})(), Settings())
    politeness = cluster.politeness()
    stats = cluster.stats(Stats())
    try:
        async with state(name, admin, server) as lift:
            acquire = politeness.acquire(
                "example.com", time.time(), concurrency=1, delay=0, lease_seconds=30
            )
            if name == "OOM":  # Redis runs a script whose first write frees memory
                with contextlib.suppress(FrontierUnavailable):
                    await acquire
            else:
                with pytest.raises(FrontierUnavailable, match=rf"\(politeness\) .*{name}"):
                    await acquire
            stats.inc("pages", 3)
            with pytest.raises(FrontierUnavailable, match=rf"\(stats\) .*{name}"):
                await stats.flush()
            await lift()
            await stats.flush()
            assert (await stats.totals())["pages"] == 3
    finally:
        await frontier.close()


@pytest.mark.parametrize("name", STATES)
async def test_the_start_claim_waits_for_a_redis_that_refuses_writes(
    server: RedisServer, admin: Redis, name: str
) -> None:
    frontier = RedisFrontier(admin, project="shop", job="nightly")
    await frontier.open_job()  # the job exists before Redis stops taking writes
    claim = StartClaim(frontier, "worker-a", lease_seconds=30)
    async with state(name, admin, server) as lift:
        waiting = asyncio.create_task(claim.wait_turn(poll=0.05))
        # a few of its polls (every 0.05 s) of a real redis-server that refuses
        await asyncio.sleep(0.3)
        assert not waiting.done(), "it waits; it neither raises nor claims"
        await lift()
        assert await asyncio.wait_for(waiting, 5) == 0


async def test_a_redis_loading_its_dataset_is_unavailable_and_then_works(
    server: RedisServer, admin: Redis
) -> None:
    """LOADING: a restarted Redis reads a dataset that takes a while (each key delayed)."""
    for i in range(40):  # incompressible, so that Redis answers between two keys
        await admin.set(f"filler:{i}", os.urandom(4000))
    await admin.save()
    server.stop()
    server.args = ["--key-load-delay", "50000", "--loading-process-events-interval-bytes", "1024"]
    server.start(ready=False)
    # A client that does not retry (the frontier's own waits a second or so first).
    client = Redis.from_url(server.url, retry=Retry(NoBackoff(), 0))
    frontier = RedisFrontier(client, project="shop", job="nightly")
    try:
        with pytest.raises(FrontierUnavailable, match="loading its dataset"):
            await frontier.push([req(0)], time.time())
        await check_access(frontier.client, server.url)  # not refused: waited for
        async with asyncio.timeout(20):
            while True:
                try:
                    assert await frontier.push([req(0)], time.time())
                    break
                except FrontierUnavailable:
                    # polls a real process: redis-server loads its dataset on its own
                    await asyncio.sleep(0.1)
    finally:
        await client.aclose()


# -- refused ------------------------------------------------------------------------------
@pytest.fixture
def locked() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server(), password=PASSWORD) as server:
        yield server


def url_with(server: RedisServer, userinfo: str) -> str:
    return server.url.replace("redis://", f"redis://{userinfo}@")


@pytest.mark.parametrize(
    ("userinfo", "meaning"),
    [
        (":wrong-password", "refused the credentials"),
        ("", "it needs credentials"),
        ("nobody:wrong-password", "refused the credentials"),
    ],
)
async def test_wrong_or_missing_credentials_are_fatal_never_unavailable(
    locked: RedisServer, userinfo: str, meaning: str
) -> None:
    url = url_with(locked, userinfo) if userinfo else locked.url
    frontier = RedisFrontier(url, project="shop", job="nightly")
    try:
        with pytest.raises(FatalError, match=meaning) as raised:
            await frontier.push([req(0)], time.time())
        assert not isinstance(raised.value, FrontierUnavailable)
        assert "wrong-password" not in str(raised.value)
        with pytest.raises(ConfigError, match=r"Redis at redis://(nobody)?:?\*?\*?\*?@?127") as at:
            await check_access(frontier.client, url)
        assert meaning in str(at.value)
        assert "wrong-password" not in str(at.value)
    finally:
        await frontier.close()


async def test_an_acl_user_without_rights_on_the_jobs_keys_is_refused_at_start(
    locked: RedisServer,
) -> None:
    admin = Redis.from_url(url_with(locked, f":{PASSWORD}"))
    await admin.acl_setuser(
        "reader", enabled=True, passwords=["+reader-pw"], keys=["%R~*"], commands=["+@all"]
    )
    await admin.acl_setuser(
        "elsewhere", enabled=True, passwords=["+other-pw"], keys=["other:*"], commands=["+@all"]
    )
    await admin.aclose()
    for user, password in (("reader", "reader-pw"), ("elsewhere", "other-pw")):
        url = url_with(locked, f"{user}:{password}")
        frontier = RedisFrontier(url, project="shop", job="nightly")
        control = JobControl(frontier.client, frontier.keys)
        try:
            with pytest.raises(FatalError, match="the ACL user lacks the rights"):
                await frontier.push([req(0)], time.time())

            async def probe(
                frontier: RedisFrontier = frontier, control: JobControl = control
            ) -> None:
                await frontier.counts(0.0)
                await control.touch()

            with pytest.raises(ConfigError, match=f"Redis at redis://{user}:\\*\\*\\*@.*NOPERM"):
                await check_access(frontier.client, url, probe)
        finally:
            await frontier.close()


async def test_the_dashboards_source_says_so_at_start_with_the_url_masked(
    locked: RedisServer,
) -> None:
    from skitter.dashboard._source import ClusterSource

    for url, meaning in (
        (url_with(locked, ":wrong-password"), "refused the credentials"),
        ("redis://:wrong-password@127.0.0.1:1/0", "cannot be reached"),
    ):
        with pytest.raises(ConfigError, match=meaning) as raised:
            await ClusterSource(url).start()
        assert "wrong-password" not in str(raised.value)
        assert "redis://:***@127.0.0.1" in str(raised.value)


async def test_stats_totals_read_through_an_outage_as_unavailable(server: RedisServer) -> None:
    client = Redis.from_url(server.url)
    try:
        stats = RedisStats(client, JobKeys.for_job("shop", "nightly"), Stats())
        server.stop()
        with pytest.raises(FrontierUnavailable, match="cannot be reached"):
            await stats.totals()
    finally:
        await client.aclose()
