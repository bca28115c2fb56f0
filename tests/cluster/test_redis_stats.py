"""Shared stats on a real redis-server: two ``RedisStats`` (two workers) add up their
counters, merge maxima and set values, survive a Redis outage, and flush on their own."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from redis.asyncio import Connection, Redis

from skitter._types import StatsSink
from skitter.cluster import RedisStats
from skitter.engine import Stats
from skitter.exceptions import FrontierUnavailable
from skitter.redis import JobKeys
from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server


@pytest.fixture
async def other_client(redis_url: str) -> Any:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def aof_server() -> Any:
    """A server of its own that keeps its data across a restart, as production's should."""
    with RedisServer(aof=True, binary=require_redis_server()) as server:
        yield server


async def test_two_workers_add_up(client: Redis, other_client: Redis, keys: JobKeys) -> None:
    one, two = RedisStats(client, keys, Stats()), RedisStats(other_client, keys, Stats())
    sink: StatsSink = one  # what every component reports into
    sink.inc("downloader/response_count")
    sink.inc("downloader/response_count", 4)
    one.inc("downloader/response_bytes", 1000)
    two.inc("downloader/response_count", 10)
    two.inc("elapsed", 0.25)
    two.inc("elapsed", 0.5)
    await one.flush()
    await two.flush()
    one.inc("downloader/response_count")
    await one.flush()
    totals = await two.totals()
    assert totals == {
        "downloader/response_bytes": 1000,
        "downloader/response_count": 16,
        "elapsed": 0.75,
    }
    # get() is this worker's own number, like engine.Stats.
    assert one.get("downloader/response_count") == 6
    assert two.get("downloader/response_count") == 10
    assert one.get("missing", "x") == "x"
    assert one.to_dict() == {"downloader/response_bytes": 1000, "downloader/response_count": 6}


async def test_max_keeps_the_largest_and_set_the_last_written(
    client: Redis, other_client: Redis, keys: JobKeys
) -> None:
    one, two = RedisStats(client, keys, Stats()), RedisStats(other_client, keys, Stats())
    one.max("request_depth_max", 3)
    two.max("request_depth_max", 7)
    two.max("request_depth_max", 5)  # lower than this worker's own: nothing to send
    one.max("latency_max", 1.5)
    one.set("finish_reason", "shutdown")
    one.set("worker", {"name": "a", "pid": 1})
    await two.flush()
    await one.flush()
    two.set("finish_reason", "finished")
    two.max("latency_max", 0.5)
    await two.flush()
    assert await one.totals() == {
        "finish_reason": "finished",
        "latency_max": 1.5,
        "request_depth_max": 7,
        "worker": {"name": "a", "pid": 1},
    }
    assert two.get("request_depth_max") == 7


async def test_nothing_goes_to_redis_until_a_flush_and_an_idle_flush_costs_nothing(
    counted: Any, keys: JobKeys
) -> None:
    stats = RedisStats(counted.client, keys, Stats())
    await stats.totals()  # connect
    before = counted.sends
    for _ in range(1000):
        stats.inc("item_scraped_count")
    stats.max("depth", 3)
    stats.set("status", "running")
    assert counted.sends == before
    assert stats.pending == 3
    await stats.flush()
    assert counted.sends - before == 1, "one MULTI/EXEC round trip"
    assert stats.pending == 0
    await stats.flush()
    assert counted.sends - before == 1
    before = counted.sends
    assert (await stats.totals())["item_scraped_count"] == 1000
    assert counted.sends - before == 1


async def test_values_json_cannot_encode_are_stored_as_text(client: Redis, keys: JobKeys) -> None:
    stats = RedisStats(client, keys, Stats())
    stats.set("spider", object.__new__(type("Odd", (), {"__str__": lambda self: "odd"})))
    await stats.flush()
    assert await stats.totals() == {"spider": "odd"}


async def test_a_sum_made_float_elsewhere_still_adds_up(
    client: Redis, other_client: Redis, keys: JobKeys
) -> None:
    one, two = RedisStats(client, keys, Stats()), RedisStats(other_client, keys, Stats())
    one.inc("seconds", 1.5)
    await one.flush()
    two.inc("seconds", 2)  # an int amount on a sum Redis holds as a float
    await two.flush()
    await two.flush()
    two.inc("seconds", 1)
    await two.flush()
    assert await one.totals() == {"seconds": 4.5}


async def test_a_redis_outage_loses_no_counts(aof_server: RedisServer, keys: JobKeys) -> None:
    redis_server = aof_server
    client = Redis.from_url(redis_server.url)
    try:
        stats = RedisStats(client, keys, Stats())
        stats.inc("n", 2)
        stats.max("m", 1)
        await stats.flush()
        redis_server.stop()
        stats.inc("n", 3)
        stats.max("m", 5)
        stats.set("s", "old")
        with pytest.raises(FrontierUnavailable, match="cannot be reached"):
            await stats.flush()
        stats.inc("n", 4)  # counted while Redis is away
        stats.set("s", "new")
        redis_server.start()
        await stats.flush()
        assert await stats.totals() == {"m": 5, "n": 9, "s": "new"}
    finally:
        await client.aclose()


async def test_run_flushes_on_its_own_and_rides_out_an_outage(
    aof_server: RedisServer, keys: JobKeys, caplog: pytest.LogCaptureFixture
) -> None:
    redis_server = aof_server
    client = Redis.from_url(redis_server.url)
    stats = RedisStats(client, keys, Stats(), flush_interval=0.01)

    async def totals_reach(n: int) -> None:
        # The totals live in another process: nothing to wait on but the numbers.
        async def reached() -> bool:
            return (await stats.totals()).get("pages") == n

        await wait_until(reached, timeout=5)

    failed = asyncio.Event()

    class OnFailure(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "cannot flush" in record.getMessage():
                failed.set()

    handler = OnFailure()
    logging.getLogger("skitter.stats.redis").addHandler(handler)
    try:
        async with asyncio.TaskGroup() as group:
            flusher = group.create_task(stats.run())
            stats.inc("pages")
            await totals_reach(1)
            with caplog.at_level(logging.INFO, logger="skitter.stats.redis"):
                redis_server.stop()
                stats.inc("pages", 2)
                async with asyncio.timeout(5):
                    await failed.wait()
                redis_server.start()
                await totals_reach(3)
            assert not flusher.done(), "an outage does not end the flusher"
            flusher.cancel()
    finally:
        logging.getLogger("skitter.stats.redis").removeHandler(handler)
        await client.aclose()
    assert sum("cannot flush" in r.message for r in caplog.records) == 1, "logged once"
    assert any("again" in r.message for r in caplog.records)


async def test_clear_deletes_the_shared_totals(client: Redis, keys: JobKeys) -> None:
    stats = RedisStats(client, keys, Stats())
    stats.inc("a")
    stats.max("b", 1)
    stats.set("c", 1)
    await stats.flush()
    await stats.clear()
    assert await stats.totals() == {}
    assert await client.keys(f"{keys.tag}*") == []


def test_a_flush_interval_must_be_positive(keys: JobKeys) -> None:
    with pytest.raises(ValueError, match="flush_interval"):
        RedisStats(None, keys, Stats(), flush_interval=0)  # type: ignore[arg-type]


async def test_a_flush_cancelled_with_its_reply_on_the_way_counts_once(
    redis_url: str, client: Redis, keys: JobKeys
) -> None:
    """The crawl's end cancels the periodic flush, then flushes once more: a flush that
    Redis has already received must not go again with the last one (a job's totals
    once read 303 items for the 300 it scraped)."""
    sent = asyncio.Event()

    class Announcing(Connection):
        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            await super().send_packed_command(command, check_health)
            chunks = [command] if isinstance(command, bytes | str) else command
            if any(b"MULTI" in bytes(chunk) for chunk in chunks if not isinstance(chunk, str)):
                sent.set()

    worker = Redis.from_url(redis_url, connection_class=Announcing)
    try:
        stats = RedisStats(worker, keys, Stats())
        stats.inc("item_scraped_count", 3)
        periodic = asyncio.create_task(stats.flush())
        await sent.wait()  # the MULTI/EXEC is with Redis: it applies it, whatever we do now
        periodic.cancel()
        await asyncio.gather(periodic, return_exceptions=True)
        stats.inc("item_scraped_count")
        await stats.flush()  # the crawl's last
        totals = await RedisStats(client, keys, Stats()).totals()
        assert totals == {"item_scraped_count": 4}
    finally:
        await worker.aclose()
