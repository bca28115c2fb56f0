"""skitter on a real 3-master Redis Cluster (issue 14): the frontier contract, every
key of a job in one slot, and workers crawling a site through the cluster client."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_workers import PAGES, SPIDER, Site, finish, items, start, worker

from skitter.frontier import Frontier, RedisFrontier
from skitter.redis import JobKeys, RedisTarget
from skitter.testing import wait_until
from skitter.testing._redis_deploy import RedisClusterSet, require_deploy_tools
from skitter.testing.frontier_contract import FailedTasksContract, FrontierContract


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[RedisClusterSet]:
    require_deploy_tools()
    with RedisClusterSet(3) as cluster:
        yield cluster


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(SPIDER)
    return path


@pytest.fixture
def target(redis_cluster: RedisClusterSet) -> RedisTarget:
    redis_cluster.flushall()
    return RedisTarget(redis_cluster.url, cluster=True)


class TestRedisClusterFrontier(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self, target: RedisTarget) -> AsyncIterator[Frontier]:
        frontier = RedisFrontier(target, project="contract", job="test", time_source="caller")
        yield frontier
        await frontier.close()


class TestRedisClusterFrontierWithBloomFilter(FrontierContract, FailedTasksContract):
    keeps_crawl_times = False

    @pytest.fixture
    async def frontier(self, target: RedisTarget) -> AsyncIterator[Frontier]:
        frontier = RedisFrontier(
            target,
            project="contract",
            job="bloom",
            dupefilter="bloom",
            bloom_capacity=10_000,
            time_source="caller",
        )
        yield frontier
        await frontier.drop()
        await frontier.close()


def test_every_key_of_a_job_is_in_one_slot() -> None:
    """What makes every script and MULTI/EXEC of a job single-slot on a Redis Cluster:
    the frontier's keys, the Bloom filter's, the cluster services' and a slot's."""
    from redis.crc import key_slot

    from skitter.redis import JobKeys

    keys = JobKeys.for_job("shop:{odd}", "night ly", prefix="skitter")
    names = [name for name in dir(keys) if not name.startswith("_")]
    found = [getattr(keys, name) for name in names]
    every = [key for key in found if isinstance(key, str) and key.startswith(keys.tag + ":")]
    every += [keys.permits("example.com:443"), keys.pace("{x}")]
    assert len(every) > 15
    assert {key_slot(key.encode()) for key in every} == {key_slot(keys.tag.encode())}


def test_a_target_names_one_deployment_and_never_its_password() -> None:
    from skitter.exceptions import ConfigError

    url = "redis://user:s3cret@127.0.0.1:7000/0"
    assert "s3cret" not in str(RedisTarget(url, cluster=True))
    assert "s3cret" not in str(RedisTarget(url, sentinel_master="mymaster"))
    assert str(RedisTarget(url)) == "redis://user:***@127.0.0.1:7000/0"
    with pytest.raises(ConfigError):
        RedisTarget(url, cluster=True, sentinel_master="mymaster")
    settings = {"REDIS_CLUSTER": False, "REDIS_SENTINEL_MASTER": "m"}
    assert RedisTarget.from_settings(url, settings) == RedisTarget(url, sentinel_master="m")
    assert RedisTarget.from_settings(url, {"REDIS_CLUSTER": True}).cluster
    assert RedisTarget.of(url) == RedisTarget(url)


async def test_two_workers_crawl_a_site_on_the_cluster_one_killed_mid_crawl(
    serve: Any, tmp_path: Path, target: RedisTarget, spider_file: Path
) -> None:
    site = Site(latency=0.03)
    base = await serve(site.app)
    outs = [tmp_path / "steady.jsonl", tmp_path / "victim.jsonl"]
    cmds = [  # the setting (the one that finishes: checked below), and the option
        worker(spider_file, target.url, outs[0], base, "REDIS_CLUSTER=true"),
        [*worker(spider_file, target.url, outs[1], base), "--redis-cluster"],
    ]
    steady, victim = [await start(cmd) for cmd in cmds]
    await wait_until(lambda: len(site.served) >= 40, timeout=30)  # both are crawling
    victim.kill()
    await victim.wait()
    assert len(site.served) < PAGES  # mid-crawl
    text = await finish(steady)
    assert "on redis-cluster://127.0.0.1:" in text  # it joined through the cluster client
    got = items(outs)
    assert set(got) == set(range(PAGES))  # every page, the victim's leases taken over
    assert len(got) - len(set(got)) <= 4  # at most what the victim had in flight


async def test_push_and_the_dashboard_source_on_the_cluster(target: RedisTarget) -> None:
    import time

    from test_workers import SRC

    from skitter.dashboard._source import ClusterSource

    push = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "push", "http://127.0.0.1:9/a", "http://127.0.0.1:9/b",
        "--redis", target.url, "--redis-cluster", "--spider", "shop", "--job", "pushed",
        "--create", env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out = (await asyncio.wait_for(push.communicate(), timeout=30))[0].decode()
    assert push.returncode == 0, out
    frontier = RedisFrontier(target, project="shop", job="pushed", kind=None, create=False)
    try:
        await frontier.open_job()
        assert (await frontier.counts(time.time())).ready == 2
    finally:
        await frontier.close()
    async with ClusterSource(target) as source:  # the jobs found on every master
        assert [project.name for project in source] == ["shop:pushed"]


def test_a_cluster_out_of_reach_is_unavailable_for_now() -> None:
    from redis.exceptions import RedisClusterException, SlotNotCoveredError

    from skitter.redis import classify

    down = RedisClusterException("Redis Cluster cannot be connected. Please provide ...")
    assert classify(down) == ("unavailable", "cannot be reached")
    assert classify(SlotNotCoveredError("Slot 42 is not covered")) is not None
    assert classify(RedisClusterException("some other mistake")) is None
    refused = RedisClusterException(
        "Redis Cluster cannot be connected. Please provide at least one reachable node: "
        "invalid username-password pair or user is disabled."
    )
    assert classify(refused) == ("refused", "refused the credentials (WRONGPASS)")


async def test_a_frontier_on_a_stopped_cluster_pauses_rather_than_fails() -> None:
    """Every node stopped: the cluster client's own exception (no RedisError) must mean
    "unavailable" (the worker pauses), and the frontier works again once they are back."""
    import time

    from skitter.exceptions import FrontierUnavailable
    from skitter.http import Request

    require_deploy_tools()
    with RedisClusterSet(3) as cluster:
        target = RedisTarget(cluster.url, cluster=True)
        frontier = RedisFrontier(target, project="down", job="test")
        try:
            await frontier.push([Request("http://127.0.0.1:9/a")], time.time())
            for node in cluster.nodes:
                node.stop()
            with pytest.raises(FrontierUnavailable, match="cannot be reached"):
                await frontier.counts(time.time())
        finally:
            await frontier.close()


@pytest.mark.parametrize("command", ["worker", "push", "dashboard", "job"])
def test_every_redis_command_takes_the_deployment_options(command: str) -> None:
    from skitter.cli._main import _build_parser
    from skitter.cli._redis_option import redis_target, target_settings

    rest = {"worker": ["s.py", "--job", "j"], "push": ["http://x/", "--job", "j", "--spider", "s"]}
    base = [command, *rest.get(command, []), "--redis", "redis://127.0.0.1:7000/0"]
    parser = _build_parser()
    args = parser.parse_args([*base, "--redis-cluster"])
    assert redis_target(args) == RedisTarget("redis://127.0.0.1:7000/0", cluster=True)
    assert target_settings(args) == {"REDIS_CLUSTER": True}
    args = parser.parse_args([*base, "--redis-sentinel", "mymaster"])
    assert redis_target(args).sentinel_master == "mymaster"
    assert target_settings(args) == {"REDIS_SENTINEL_MASTER": "mymaster"}
    assert redis_target(parser.parse_args(base)) == RedisTarget("redis://127.0.0.1:7000/0")
    with pytest.raises(SystemExit):  # one or the other
        parser.parse_args([*base, "--redis-cluster", "--redis-sentinel", "m"])


async def test_a_cluster_with_a_password_takes_it_and_refuses_a_wrong_one_masked() -> None:
    from test_workers import SRC

    require_deploy_tools()
    secret = "s3cret-cluster-pw"
    with RedisClusterSet(3, password=secret) as cluster:
        port = cluster.nodes[0].port
        outputs = {}
        for password in (secret, "wrong-pw"):
            push = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "skitter", "push", "http://127.0.0.1:9/a",
                "--redis-cluster", "--spider", "shop", "--job", "pw", "--create",
                env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin",
                     "SKITTER_REDIS_URL": f"redis://:{password}@127.0.0.1:{port}/0"},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            out = (await asyncio.wait_for(push.communicate(), timeout=30))[0].decode()
            outputs[password] = (push.returncode, out)
    assert outputs[secret][0] == 0, outputs[secret][1]
    code, out = outputs["wrong-pw"]
    assert code == 2, out  # refused at once, not waited for as an outage
    assert "refused the credentials" in out
    for _, text in outputs.values():
        assert secret not in text and "wrong-pw" not in text


async def test_a_workers_items_go_to_its_cluster_by_default(
    serve: Any, tmp_path: Path, target: RedisTarget, spider_file: Path
) -> None:
    """RedisPipeline without REDIS_ITEMS_URL writes to the worker's own Redis, reached as
    the worker reaches it: through the cluster client, not as a single node (the key is
    one the node the URL names does not serve)."""
    import json

    from redis.asyncio.cluster import RedisCluster

    site = Site(latency=0.0)
    base = await serve(site.app)
    client = RedisCluster.from_url(target.url)
    try:
        await client.initialize()
        url_port = int(target.url.rsplit(":", 1)[1].split("/")[0])
        key = next(
            k
            for k in (f"tree:items:{{{tag}}}" for tag in "abcdefghijklmnop")
            if client.get_node_from_key(k).port != url_port
        )
        settings = ('ITEM_PIPELINES={"skitter.pipelines.RedisPipeline": 300}',
                    f"REDIS_ITEMS_KEY={key.replace('tree', '%(spider)s', 1)}")  # fmt: skip
        cmd = worker(spider_file, target.url, tmp_path / "w.jsonl", base, *settings)
        text = await finish(await start([*cmd, "--redis-cluster"]))
        stored = await client.lrange(key, 0, -1)
    finally:
        await client.aclose()
    assert sorted(json.loads(raw)["n"] for raw in stored) == list(range(PAGES)), text


class TestRedisClusterShardedFrontier(FrontierContract, FailedTasksContract):
    """The contract with the job split over three shards, one per master."""

    @pytest.fixture
    async def frontier(self, target: RedisTarget) -> AsyncIterator[Frontier]:
        from skitter.frontier.redis import ShardedRedisFrontier

        frontier = ShardedRedisFrontier(
            target, project="contract", job="sharded", shards=3, time_source="caller"
        )
        yield frontier
        await frontier.drop()
        await frontier.close()


#: The tree of test_workers over two hosts of the loopback (a host per shard): page n
#: is served as 127.0.0.1 when n is even, as localhost when it is odd.
TWO_HOSTS = SPIDER.replace(
    'yield response.follow(f"/p/{m}")',
    'yield response.follow(f"http://{HOSTS[m % 2]}:{port}/p/{m}")',
).replace("n = int(", "port = response.url.split(':')[2].split('/')[0]\n        n = int(")
TWO_HOSTS = TWO_HOSTS.replace("class Tree", 'HOSTS = ("127.0.0.1", "localhost")\n\n\nclass Tree')


async def test_two_workers_crawl_a_sharded_job_each_host_on_its_master(
    serve: Any, tmp_path: Path, target: RedisTarget
) -> None:
    """``--shards 2`` on the 3-master cluster: the two shards on two masters, each host's
    tasks and outcomes on its own shard, and the crawl complete although one worker is
    SIGKILLed mid-crawl."""
    from redis.asyncio.cluster import RedisCluster

    from skitter.http import Request

    spider_file = tmp_path / "tree2.py"
    spider_file.write_text(TWO_HOSTS)
    site = Site(latency=0.03)
    base = await serve(site.app)
    outs = [tmp_path / "steady.jsonl", tmp_path / "victim.jsonl"]
    cmds = [
        [*worker(spider_file, target.url, out, base, "REDIS_CLUSTER=true"), "--shards", "2"]
        for out in outs
    ]
    steady, victim = [await start(cmd) for cmd in cmds]
    await wait_until(lambda: len(site.served) >= 40, timeout=30)  # both are crawling
    victim.kill()
    await victim.wait()
    await finish(steady)
    got = items(outs)
    assert set(got) == set(range(PAGES))
    assert len(got) - len(set(got)) <= 4

    keys = JobKeys.for_job("tree", "test", shards=2)
    port = base.rsplit(":", 1)[1]
    client = RedisCluster.from_url(target.url)
    try:
        await client.initialize()
        masters = {client.get_node_from_key(f"{tag}:meta").name for tag in keys.shards}
        assert len(masters) == 2
        for n in range(PAGES):
            host = ("127.0.0.1", "localhost")[n % 2] if n else "127.0.0.1"
            taskid = Request(f"http://{host}:{port}/p/{n}").taskid
            home = keys.shards[keys.shard_of(host)]
            for tag in keys.shards:
                assert bool(await client.hexists(f"{tag}:done", taskid)) == (tag == home)
    finally:
        await client.aclose()


async def test_permits_of_hosts_on_several_shards_renew_on_the_cluster(
    target: RedisTarget,
) -> None:
    """One renew for permits of hosts on two shards: one script call per shard, since a
    call whose keys span two slots is refused by the cluster."""
    import time

    from skitter.cluster._politeness import RedisPoliteness

    keys = JobKeys.for_job("p", "renew", shards=2)
    hosts = ["127.0.0.1", "localhost"]
    assert {keys.shard_of(host) for host in hosts} == {0, 1}
    client = target.client()
    try:
        politeness = RedisPoliteness(client, keys, owner="w")
        now = time.time()
        held = []
        for host in hosts:
            permit, _ = await politeness.acquire(host, now, concurrency=1, delay=0.0,
                                                 lease_seconds=5.0)  # fmt: skip
            assert permit is not None
            held.append((host, permit))
        assert await politeness.renew(held, now, 30.0) == [True, True]
    finally:
        await client.aclose()


async def test_n_shards_sit_on_n_masters_of_the_real_cluster(target: RedisTarget) -> None:
    from redis.asyncio.cluster import RedisCluster

    client = RedisCluster.from_url(target.url)
    try:
        await client.initialize()
        for job in range(10):
            keys = JobKeys.for_job("shop", f"job-{job}", shards=3)
            masters = {client.get_node_from_key(f"{tag}:meta").name for tag in keys.shards}
            assert len(masters) == 3, (job, masters)
    finally:
        await client.aclose()
