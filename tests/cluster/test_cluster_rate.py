"""The project's rate and burst come from the job's control record (issue 14): the bucket
script reads them, so a rate set from ``skitter dashboard --redis`` (or one worker's UI)
holds for every worker from its next token on. A real redis-server; at the end, two
workers in this process on virtual time (the job's scripts on the caller's clock)
against a real HTTP server that stamps arrivals, so the rates are asserted exactly."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Response, Spider
from skitter.cluster import RedisPoliteness
from skitter.cluster._control import JobControl
from skitter.redis import JobKeys
from skitter.testing import VirtualTimeLoop, virtual_clock

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
class Tree(Spider):
    """Page n links to 2n+1 and 2n+2: more work than any rate here can fetch."""

    name = "tree"
    base = ""

    def start_requests(self) -> Any:
        yield Request(self.base + "/p/0")

    def parse(self, response: Response) -> Any:
        n = int(response.url.rsplit("/", 1)[1])
        for m in (2 * n + 1, 2 * n + 2):
            yield response.follow(f"/p/{m}")


def steps(start: float, step: float, count: int) -> list[float]:
    return [round(start + step * n, 6) for n in range(count)]


def virtual_worker(
    redis_url: str, base: str, spider: type[Spider] = Tree, **settings: Any
) -> Crawler:
    """A worker of job "test" in this process, on the loop's virtual time: the job's
    scripts decide by the caller's clock, which is that time."""
    crawler = Crawler(
        spider,
        {"CONCURRENT_REQUESTS": 4, "STATS_DUMP": False, "WORKER_IDLE_TIMEOUT": 2, **settings},
        clock=virtual_clock(),
        redis_url=redis_url,
        job="test",
        base=base,
    )
    assert crawler.cluster is not None
    crawler.cluster.time_source = "caller"
    return crawler


def arrivals_site() -> tuple[web.Application, list[float]]:
    """A site that stamps each arrival with the virtual seconds since the test began."""
    arrivals: list[float] = []

    async def page(request: web.Request) -> web.Response:
        arrivals.append(round(asyncio.get_running_loop().time() - VirtualTimeLoop.START, 6))
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app, arrivals


@pytest.mark.virtual_time
async def test_a_rate_set_in_the_jobs_record_holds_for_every_worker_from_its_next_token(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app, arrivals = arrivals_site()
    base = await serve(app)
    slow = {"RATE": 2, "BURST": 1, "CLOSESPIDER_TIMEOUT": 7.9}  # not at a token's instant
    workers = [virtual_worker(redis_url, base, **slow) for _ in range(2)]
    crawls = [asyncio.create_task(worker.run()) for worker in workers]
    await asyncio.sleep(4.25)  # virtual: between two tokens (at 2/s: 4.0 and 4.5)
    # What the dashboard's set_rate and a worker's UI write (after their limits check).
    control = JobControl(client, JobKeys.for_job("tree", "test"))
    await control.set_rate(8.0, 1.0, virtual_clock().time())
    stats = await asyncio.gather(*crawls)
    assert all(s["response_received_count"] > 0 for s in stats)  # both crawled
    # 2/s for the two together, to 4.5 s (the token each waited for since 4.0), then
    # 8/s from each one's next token on; until CLOSESPIDER_TIMEOUT at 7.9 s. Which
    # worker's Redis reply comes first is real, not virtual: one that took a token before
    # it had a task keeps it until it has one (ClusterGate.admit: a token is never
    # wasted), so a token instant may see two arrivals, never more (one in hand each).
    slow_phase = [t for t in arrivals if t <= 4.5]
    fast_phase = [t for t in arrivals if t > 4.5]
    assert all(t * 2 == int(t * 2) for t in slow_phase), slow_phase  # on 2/s's instants
    assert all(t * 8 == int(t * 8) for t in fast_phase), fast_phase  # on 8/s's instants
    assert fast_phase[0] == 4.625  # the new rate from the first token after 4.5 s
    for limit in (*steps(0.5, 0.5, 9), *steps(4.625, 0.125, 27)):
        tokens = 1 + 2 * min(limit, 4.5) + 8 * max(0.0, limit - 4.5)  # burst + earned
        assert tokens - 2 <= sum(1 for t in arrivals if t <= limit) <= tokens, limit


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
