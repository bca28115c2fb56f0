"""The start-request claim is fenced like a lease: a worker whose claim lapsed can
neither move the offset back nor renew (or finish) the claim another worker took over;
the offset never moves back; a job whose state vanished is JobStateLost here too."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Spider
from skitter.cluster import StartClaim
from skitter.exceptions import JobStateLost
from skitter.frontier import RedisFrontier
from skitter.redis import JobKeys
from skitter.testing import wait_until


@pytest.fixture
async def frontiers(redis_url: str) -> AsyncIterator[tuple[RedisFrontier, RedisFrontier]]:
    one = RedisFrontier(redis_url, project="p", job="j")
    two = RedisFrontier(redis_url, project="p", job="j")
    await one.open_job()
    await two.open_job()
    yield one, two
    await one.close()
    await two.close()


async def offset(client: Redis, frontier: RedisFrontier) -> int:
    return int(await client.hget(frontier.keys.start, "offset") or 0)


async def test_an_expired_claimer_cannot_move_the_offset_back_or_keep_the_claim(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, two = frontiers
    slow = StartClaim(one, "slow", lease_seconds=1.0)
    fast = StartClaim(two, "fast", lease_seconds=1.0)
    assert await slow.wait_turn(poll=0.05) == 0
    assert await slow.progress(3)
    await asyncio.sleep(1.1)  # the slow worker paused: its claim lapsed
    assert await asyncio.wait_for(fast.wait_turn(poll=0.05), 5) == 3
    assert await fast.progress(7)
    assert not await slow.progress(4), "a stale claimer is refused"
    assert await offset(client, one) == 7
    assert not await slow.finished(4)
    assert await client.hget(one.keys.start, "done") is None
    assert await client.get(one.keys.start_claim) is not None, "the new claim stands"
    assert await fast.finished(9)
    assert await offset(client, one) == 9
    assert await slow.wait_turn(poll=0.05) is None  # all queued


async def test_the_offset_never_moves_back(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, _ = frontiers
    claim = StartClaim(one, "w", lease_seconds=5.0)
    assert await claim.wait_turn(poll=0.05) == 0
    assert await claim.progress(5)
    assert await claim.progress(2)
    assert await offset(client, one) == 5


async def test_a_claim_on_a_lost_job_is_job_state_lost(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, two = frontiers
    claim = StartClaim(one, "w", lease_seconds=5.0)
    assert await claim.wait_turn(poll=0.05) == 0
    await client.flushdb()
    with pytest.raises(JobStateLost, match="has no epoch"):
        await claim.progress(1)
    with pytest.raises(JobStateLost, match="has no epoch"):
        await StartClaim(two, "other", lease_seconds=5.0).wait_turn(poll=0.05)
    assert await client.keys("*") == []


async def test_a_lapsed_claim_nobody_took_is_the_holders_again(
    frontiers: tuple[RedisFrontier, RedisFrontier], client: Redis
) -> None:
    one, two = frontiers
    claim = StartClaim(one, "w", lease_seconds=1.0)
    assert await claim.wait_turn(poll=0.05) == 0
    await asyncio.sleep(1.1)  # a real redis-server: the claim's 1 s lease lapses on its clock
    assert await claim.progress(2)
    assert await client.pttl(one.keys.start_claim) > 0
    late = StartClaim(two, "late", lease_seconds=1.0)
    assert await claim.finished(3)
    assert await late.wait_turn(poll=0.05) is None
    assert not await late.progress(4), "all queued: no claim to take"


class Gated(Spider):
    """Start requests that wait for the test after the first one."""

    name = "gated"
    gate: asyncio.Event

    async def start(self) -> Any:
        for n in range(4):
            yield Request(f"{self.settings['BASE']}/p/{n}")
            if n == 0:
                await Gated.gate.wait()

    def parse(self, response: Any) -> Any:
        yield {"url": response.url}


async def test_a_worker_whose_claim_was_taken_over_stops_feeding_and_waits(
    serve: Any, redis_url: str, client: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    served: Counter[str] = Counter()

    async def page(request: web.Request) -> web.Response:
        served[request.path] += 1
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    base = await serve(app)
    Gated.gate = asyncio.Event()
    settings = {
        "BASE": base,
        "LEASE_SECONDS": 1.0,
        "WORKER_IDLE_TIMEOUT": 0.5,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
    }
    keys = JobKeys.for_job("gated", "claim")
    first = asyncio.create_task(Crawler(Gated, settings, redis_url=redis_url, job="claim").run())

    async def one_start_request_out() -> bool:
        return await client.hget(keys.start, "offset") == b"1"

    await wait_until(one_start_request_out)
    stale = await client.get(keys.start_claim)
    await asyncio.sleep(1.2)  # the first worker's start requests stall: its claim lapses
    second = asyncio.create_task(Crawler(Gated, settings, redis_url=redis_url, job="claim").run())

    async def claimed_anew() -> bool:
        return await client.get(keys.start_claim) not in (None, stale)

    await wait_until(claimed_anew)
    with caplog.at_level(logging.WARNING, logger="skitter.engine"):
        Gated.gate.set()
        await asyncio.wait_for(asyncio.gather(first, second), 60)
    assert served == {f"/p/{n}": 1 for n in range(4)}
    assert any("took the start requests over" in r.getMessage() for r in caplog.records)
    assert await client.hmget(keys.start, "offset", "done") == [b"4", b"1"]
