"""The project's rate and burst come from the job's control record (issue 14): the bucket
script reads them, so a rate set from ``skitter dashboard --redis`` (or one worker's UI)
holds for every worker from its next token on. A real redis-server; at the end, real
``skitter worker`` processes against a real HTTP server that counts arrivals."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from test_workers import Site, finish, start, worker

from skitter.cluster import RedisPoliteness
from skitter.cluster._control import JobControl
from skitter.frontier._redis import JobKeys
from skitter.testing._redis import RedisServer, require_redis_server

T0 = 1_700_000_000.0


@pytest.fixture
def pair(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def test_without_a_record_each_call_uses_the_callers_rate(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, _ = pair
    assert await a.take_token(T0, 2.0, 1.0) == 0.0
    assert await a.take_token(T0, 2.0, 1.0) == pytest.approx(0.5)


async def test_the_records_rate_overrides_every_workers_own(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, b = pair
    await JobControl(client, keys).set_rate(10.0, 1.0, T0)
    # Both workers still pass their own 1/s: the job's 10/s applies to each.
    assert await a.take_token(T0, 1.0, 1.0) == 0.0
    assert await b.take_token(T0, 1.0, 1.0) == pytest.approx(0.1)
    assert await b.take_token(T0 + 0.125, 1.0, 1.0) == 0.0
    await JobControl(client, keys).set_rate(0.5, 1.0, T0)
    assert await a.take_token(T0 + 0.125, 1.0, 1.0) == pytest.approx(2.0, abs=0.1), "slower"


async def test_a_record_without_a_burst_gets_the_default_within_max_burst(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, b = pair
    await JobControl(client, keys).set_rate(2.0, None, T0)
    taken = 0
    while await a.take_token(T0, 1.0, 1.0) == 0.0:
        taken += 1
    assert taken == 20  # 10 x 2/s
    await client.delete(keys.bucket)
    taken = 0
    while await b.take_token(T0, 1.0, 1.0, max_burst=3.0) == 0.0:
        taken += 1
    assert taken == 3


async def test_an_unlimited_record_gives_tokens_without_counting(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = pair
    await JobControl(client, keys).set_rate(None, None, T0)
    for _ in range(50):
        assert await a.take_token(T0, 1.0, 1.0) == 0.0


async def test_a_record_beyond_a_workers_limits_leaves_it_its_own_rate(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = pair
    control = JobControl(client, keys)
    await control.set_rate(100.0, 1.0, T0)
    assert await a.take_token(T0, 1.0, 1.0, max_rate=10.0) == 0.0
    assert await a.take_token(T0, 1.0, 1.0, max_rate=10.0) == pytest.approx(1.0), "its own"
    await control.set_rate(None, None, T0)
    assert await a.take_token(T0, 1.0, 1.0, max_rate=10.0) == pytest.approx(1.0)
    await control.set_rate(1.0, 50.0, T0)
    assert await a.take_token(T0 + 1, 1.0, 1.0, max_burst=5.0) == 0.0
    assert await a.take_token(T0 + 1, 1.0, 1.0, max_burst=5.0) == pytest.approx(1.0)


async def test_junk_in_the_record_reads_as_unlimited_as_the_workers_read_it(
    pair: tuple[RedisPoliteness, RedisPoliteness], client: Redis, keys: JobKeys
) -> None:
    a, _ = pair
    await client.hset(keys.control, mapping={"rate": "fast", "rate_seq": "1"})
    assert await a.take_token(T0, 0.0, 0.0) == 0.0
    assert await a.take_token(T0, 0.0, 0.0) == 0.0
    await client.hset(keys.control, mapping={"rate_seq": "0"})  # never set: the caller's
    assert await a.take_token(T0, 0.0, 0.0) == math.inf


# -- end to end ------------------------------------------------------------------------------
@pytest.fixture
def live_redis() -> Any:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _from_the_dashboard(redis_url: str, ui: str) -> None:
    client = Redis.from_url(redis_url)
    try:
        # What the dashboard's set_rate writes, after its limits check.
        await JobControl(client, JobKeys.for_job("tree", "test")).set_rate(8.0, 1.0, time.time())
    finally:
        await client.aclose()


async def _through_a_workers_ui(redis_url: str, ui: str) -> None:
    import aiohttp

    headers = {"Authorization": "Bearer t0ken-for-the-rate-test"}
    async with aiohttp.ClientSession() as session:
        url = f"{ui}/api/projects/tree/rate"
        async with session.post(url, json={"rate": 8, "burst": 1}, headers=headers) as reply:
            assert reply.status == 200, await reply.text()


@pytest.mark.parametrize(
    "change", [_from_the_dashboard, _through_a_workers_ui], ids=["dashboard", "worker-ui"]
)
async def test_a_rate_set_from_the_dashboard_or_one_workers_ui_reaches_every_worker_within_2_s(
    serve: Any, tmp_path: Path, live_redis: RedisServer, change: Any
) -> None:
    from test_workers import SPIDER

    spider_file = tmp_path / "tree.py"
    spider_file.write_text(SPIDER)
    site = Site(latency=0.0)
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    # The crawl must outlast the window measured after the change (change + 6 s), which
    # comes ~4-5 s after the first worker starts, later on a loaded machine: 10 s cut it
    # short (24 of 32 requests counted in a CI run).
    slow = ("RATE=2", "BURST=1", "CLOSESPIDER_TIMEOUT=15")
    port = _free_port()
    ui = ["--ui", "--ui-port", str(port), "--ui-token", "t0ken-for-the-rate-test"]
    cmds = [worker(spider_file, live_redis.url, out, base, *slow) for out in outs]
    procs = [await start([*cmds[0], *ui]), await start(cmds[1])]
    async with asyncio.timeout(30):  # both crawling
        while len(site.served) < 6:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    await change(live_redis.url, f"http://127.0.0.1:{port}")
    changed = time.monotonic()
    for proc in procs:
        await finish(proc)
    times = sorted(t for t, _ in site.served)
    before = [t for t in times if changed - 2.0 <= t < changed]
    after = [t for t in times if changed + 2.0 <= t < changed + 6.0]
    assert 3 <= len(before) <= 5, before  # 2/s for the two workers together
    # 8/s for the two together, not 16/s, nor the old 2/s (8 in the window). The rate is
    # a ceiling: workers slowed by a loaded machine crawl below it (28 of 32 in a CI run),
    # so the floor only shows the new rate took over from the old one.
    assert 8 * 4 * 0.6 <= len(after) <= 8 * 4 * 1.1, len(after)
    settled = [t for t in times if changed + 0.5 <= t < changed + 2.0]
    assert len(settled) >= 8, len(settled)  # the new rate already holds within 2 s


async def test_a_workers_ui_rate_is_written_to_the_record(client: Redis, keys: JobKeys) -> None:
    from skitter import Crawler, Spider
    from skitter.cluster._presence import WorkerPresence

    class Quiet(Spider):
        name = "quiet"

    crawler = Crawler(Quiet, {"STATS_DUMP": False})
    crawler.build()
    control = JobControl(client, keys)
    presence = WorkerPresence(control, "w1", crawler.control)
    crawler.control.share_rate(presence.share_rate)
    write = crawler.control.set_rate(3.0, 2.0)
    assert write is not None
    await write
    record, _ = await control.read()
    assert (record.rate, record.burst, record.rate_seq) == (3.0, 2.0, 1)
    worker = RedisPoliteness(client, keys, owner="w2", time_source="caller")
    assert await worker.take_token(T0, 100.0, 100.0) == 0.0
    assert await worker.take_token(T0, 100.0, 100.0) == 0.0
    # Another worker started at 100/s gets the job's 3/s, burst 2.
    assert await worker.take_token(T0, 100.0, 100.0) == pytest.approx(1 / 3)
