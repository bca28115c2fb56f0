"""skitter behind Redis Sentinel (issue 14): workers find the master through a sentinel,
pause while it is replaced, and go on with the new one; nothing is lost."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.sentinel import MasterNotFoundError
from test_workers import PAGES, SPIDER, SRC, Site, finish, items, start, worker

from skitter.redis import classify
from skitter.testing import wait_until
from skitter.testing._redis_deploy import SentinelSet, require_deploy_tools


@pytest.fixture
def sentinel_set() -> Iterator[SentinelSet]:
    require_deploy_tools()
    with SentinelSet("skitter") as deployment:
        yield deployment


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(SPIDER)
    return path


def test_no_master_known_to_the_sentinel_is_unavailable_for_now() -> None:
    found = classify(MasterNotFoundError("No master found for 'skitter'"))
    assert found is not None and found[0] == "unavailable"


async def test_the_sentinel_names_the_master_and_its_client_closes_everything(
    sentinel_set: SentinelSet,
) -> None:
    import gc

    from skitter.frontier.redis import RedisFrontier
    from skitter.redis import RedisTarget

    target = RedisTarget(sentinel_set.url, sentinel_master="skitter")
    frontier = RedisFrontier(target, project="shop", job="s")
    await frontier.open_job()
    assert frontier.where == "redis-sentinel master skitter"
    role = await frontier.client.execute_command("ROLE")
    assert role[0] == b"master"
    assert int((await frontier.client.info("server"))["tcp_port"]) == sentinel_set.master.port
    await frontier.close()  # also its connection to the sentinel: no ResourceWarning
    del frontier
    gc.collect()


async def test_a_push_no_replica_holds_is_refused_not_taken(
    sentinel_set: SentinelSet,
) -> None:
    """The replica leaves the master (as a replica promoted in a failover does) while
    the sentinel still lists it up: a push on that master fails as unavailable
    (NOREPLICAS) instead of returning, so the page whose links it carried is not acked
    and the worker pushes them again, on the new master."""
    from redis.asyncio import Redis

    from skitter.exceptions import FrontierUnavailable
    from skitter.frontier.redis import RedisFrontier
    from skitter.http import Request
    from skitter.redis import RedisTarget

    # The default wait (1 s, below the client's read timeout) once the replica has
    # synced: the first push is replicated at once; only the refused one waits it out.
    target = RedisTarget(sentinel_set.url, sentinel_master="skitter", sentinel_wait_timeout=1.0)
    frontier = RedisFrontier(target, project="shop", job="wait")
    assert sentinel_set.replica is not None
    replica = Redis(port=sentinel_set.replica.port)
    try:
        while (await replica.info("replication")).get("master_link_status") != "up":  # noqa: ASYNC110 (another process's state)
            await asyncio.sleep(0.05)  # the replica's first sync with its master
        await frontier.open_job()
        await frontier.push([Request("http://a.example/1")], 0.0)  # on the replica: taken
        await replica.execute_command("REPLICAOF", "NO", "ONE")
        with pytest.raises(FrontierUnavailable, match="NOREPLICAS"):
            await frontier.push([Request("http://a.example/2")], 0.0)
    finally:
        await replica.aclose()
        await frontier.close()


def test_a_single_redis_or_a_cluster_waits_for_no_replica() -> None:
    from redis.asyncio import Redis

    from skitter.exceptions import ConfigError
    from skitter.redis import RedisTarget, replica_wait

    assert replica_wait(Redis.from_url("redis://127.0.0.1:1/0")) is None
    target = RedisTarget.from_settings(
        "redis://127.0.0.1:1/0",
        {"REDIS_SENTINEL_MASTER": "m", "REDIS_SENTINEL_WAIT_REPLICAS": 2},
    )
    found = replica_wait(target.client())
    assert found is not None and found.replicas == 2 and found.timeout_ms == 1000
    for bad in ({"REDIS_SENTINEL_WAIT_REPLICAS": -1}, {"REDIS_SENTINEL_WAIT_TIMEOUT": 0}):
        with pytest.raises(ConfigError, match="REDIS_SENTINEL_WAIT"):
            RedisTarget.from_settings("redis://127.0.0.1:1/0", bad)


@pytest.mark.parametrize(
    "how",
    ["master killed", "SENTINEL FAILOVER"],
)
async def test_a_failover_mid_crawl_loses_nothing(
    serve: Any, tmp_path: Path, sentinel_set: SentinelSet, spider_file: Path, how: str
) -> None:
    site = Site(latency=0.03)
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    sentinel = ["--redis-sentinel", "skitter"]
    procs = [
        await start([*worker(spider_file, sentinel_set.url, out, base), *sentinel]) for out in outs
    ]
    await wait_until(lambda: len(site.served) >= 40, timeout=30)  # both are crawling
    old = sentinel_set.master.port
    if how == "master killed":
        sentinel_set.kill_master()
    else:
        sentinel_set.failover()
    await asyncio.to_thread(sentinel_set.wait_failover)  # within its own bound
    assert sentinel_set.master_port() != old
    texts = [await finish(proc) for proc in procs]
    assert set(items(outs)) == set(range(PAGES))  # every item, after the failover
    # The crawl went on and did not start over. Fetched again are the pages whose ack
    # is lost: in flight (or acked, not yet replicated) when the master died; after
    # SENTINEL FAILOVER, also those acked by the old master between the promotion of
    # the replica and its own demotion (writes the new master never sees).
    assert len(site.served) < PAGES + (30 if how == "master killed" else PAGES)
    if how == "master killed":
        assert any("Task store unavailable" in text for text in texts)  # they paused
    # skitter job reads the job through the sentinel too, from the new master
    job = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "job", "--redis", sentinel_set.url, *sentinel,
        "--job", "test", env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out = (await asyncio.wait_for(job.communicate(), timeout=30))[0].decode()
    assert job.returncode == 0, out
    assert "on redis-sentinel master skitter" in " ".join(out.split())  # rich wraps it


SENTINEL_PASSWORD = "sentinel-Passw0rd-for-tests"


async def _run_worker(cmd: list[str], password: str | None) -> tuple[int, str]:
    import os

    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("SKITTER_REDIS_SENTINEL_PASSWORD", None)
    if password is not None:
        env["SKITTER_REDIS_SENTINEL_PASSWORD"] = password
    proc = await asyncio.create_subprocess_exec(
        *cmd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out = (await asyncio.wait_for(proc.communicate(), timeout=90))[0].decode()
    assert proc.returncode is not None
    return proc.returncode, " ".join(out.split())


async def test_a_sentinel_with_its_own_password(
    serve: Any, tmp_path: Path, spider_file: Path
) -> None:
    """A sentinel with ``requirepass``: its password from $SKITTER_REDIS_SENTINEL_PASSWORD
    (never on the command line, never printed); none or a wrong one stops the worker at
    once with exit 2, rather than waiting for a master it is not allowed to ask for."""
    require_deploy_tools()
    site = Site(latency=0.0)
    base = await serve(site.app)
    with SentinelSet("skitter", sentinel_password=SENTINEL_PASSWORD) as deployment:
        out = tmp_path / "w.jsonl"
        cmd = [*worker(spider_file, deployment.url, out, base), "--redis-sentinel", "skitter"]
        for password, expected in ((None, "requires a password"), ("wrong-one", "refused")):
            async with asyncio.timeout(30):  # refused at once, not waited out
                status, text = await _run_worker(cmd, password)
            assert status == 2, text
            assert expected in text and "SKITTER_REDIS_SENTINEL_PASSWORD" in text
            assert "wrong-one" not in text
        status, text = await _run_worker(cmd, SENTINEL_PASSWORD)
        assert status == 0, text
        assert SENTINEL_PASSWORD not in text
    assert sorted(items([out])) == list(range(PAGES))
