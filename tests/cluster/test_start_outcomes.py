"""A distributed job none of whose start requests got a response the spider accepted
(issue 27, item 12): whichever worker runs a start request records how it ended in the
job's record in Redis before settling its task, and the worker that queued them all
reads the whole job's record when the job is finished: it fails, naming them, and the
other workers do not. Also when the last worker out clears the job (REDIS_PERSIST off)
before the feeding worker has read it. Real redis-server, real pages on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Response, Spider
from skitter.cluster import StartClaim
from skitter.exceptions import CrawlFailed
from skitter.frontier import RedisFrontier
from skitter.redis import JobKeys
from skitter.testing import wait_until


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


async def site(serve: Any) -> str:
    # Slow enough that both workers have joined before the job is done.
    async def ok(request: web.Request) -> web.Response:
        await asyncio.sleep(0.5)  # the site's own pace: both workers join before the job is done
        return web.Response(text="<p>ok</p>", content_type="text/html")

    async def gone(request: web.Request) -> web.Response:
        await asyncio.sleep(0.5)  # the site's own pace: both workers join before the job is done
        return web.Response(status=404, text="gone")

    app = web.Application()
    app.router.add_get("/ok/{n}", ok)
    app.router.add_get("/gone/{n}", gone)
    return str(await serve(app))


def spider_of(urls: list[str]) -> type[Spider]:
    class Starts(Spider):
        name = "starts"

        def start_requests(self) -> Any:
            for url in urls:
                yield Request(url)

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    return Starts


SETTINGS = {
    "LEASE_SECONDS": 2.0,
    "WORKER_IDLE_TIMEOUT": 0.5,
    "RETRY_TIMES": 0,
    "STATS_DUMP": False,
}


async def two_workers(
    spider: type[Spider], redis_url: str, client: Redis, job: str, **settings: Any
) -> tuple[dict[str, Any] | BaseException, dict[str, Any] | BaseException]:
    """The results of a slow worker (one request at a time), which joins first and
    queues the start requests, and of a quick one, which joins once it has begun: the
    quick one runs most of them."""
    keys = JobKeys.for_job(spider.name or "", job)
    slow = Crawler(spider, {**SETTINGS, **settings, "CONCURRENT_REQUESTS": 1},
                   redis_url=redis_url, job=job)  # fmt: skip
    first = asyncio.create_task(slow.run())
    await wait_until(lambda: client.hget(keys.start, "offset"))  # the first one is out
    quick = Crawler(spider, {**SETTINGS, **settings, "CONCURRENT_REQUESTS": 4},
                    redis_url=redis_url, job=job)  # fmt: skip
    second = asyncio.create_task(quick.run())
    one, two = await asyncio.wait_for(asyncio.gather(first, second, return_exceptions=True), 60)
    return one, two


@pytest.mark.parametrize("persist", [True, False])
async def test_the_worker_that_queued_the_starts_fails_and_names_them(
    serve: Any, redis_url: str, client: Redis, caplog: pytest.LogCaptureFixture, persist: bool
) -> None:
    base = await site(serve)
    refused = closed_url()
    urls = [refused, *(f"{base}/gone/{n}" for n in range(6))]
    with caplog.at_level(logging.WARNING, logger="skitter.engine"):
        feeder, other = await two_workers(
            spider_of(urls), redis_url, client, f"fail-{persist}", REDIS_PERSIST=persist
        )
    assert isinstance(feeder, CrawlFailed), feeder
    assert "not one of its 7 start requests got a response it accepted" in feeder.reason
    assert isinstance(other, dict), other
    assert other["finish_reason"] == "finished"
    assert other["start_requests/refused"] >= 1  # it ran some: the record is the job's
    (warning,) = [r.getMessage() for r in caplog.records if "start requests" in r.getMessage()
                  and r.levelno == logging.WARNING]  # fmt: skip
    assert f"{refused}: ConnectError: cannot connect: Connection refused" in warning
    for n in range(6):  # run by either worker, named by the one that queued them
        assert f"{base}/gone/{n}: HTTP 404: a status the spider does not handle" in warning


@pytest.mark.parametrize("persist", [True, False])
async def test_one_start_accepted_on_any_worker_is_enough(
    serve: Any, redis_url: str, client: Redis, persist: bool
) -> None:
    base = await site(serve)
    urls = [closed_url(), *(f"{base}/gone/{n}" for n in range(5)), f"{base}/ok/1"]
    results = await two_workers(
        spider_of(urls), redis_url, client, f"ok-{persist}", REDIS_PERSIST=persist
    )
    assert all(isinstance(r, dict) and r["finish_reason"] == "finished" for r in results), results


async def test_the_record_is_the_jobs_and_outlives_the_clearing(
    redis_url: str, client: Redis
) -> None:
    frontier = RedisFrontier(redis_url, project="p", job="record")
    await frontier.open_job()
    try:
        one = StartClaim(frontier, "one", lease_seconds=5.0)
        two = StartClaim(frontier, "two", lease_seconds=5.0)
        assert await one.wait_turn() == 0
        for n in range(25):
            await two.refused(f"http://127.0.0.1/{n}", f"reason {n}")
        outcomes = await one.outcomes()
        assert not outcomes.accepted and outcomes.refused == 25
        assert outcomes.listed[:2] == [("http://127.0.0.1/0", "reason 0"),
                                       ("http://127.0.0.1/1", "reason 1")]  # fmt: skip
        assert len(outcomes.listed) == 20  # the first ones are named, the rest counted
        await two.accepted()
        await two.accepted()  # written once per worker
        assert await one.finished(25)
        await one.retire(60.0)  # the last worker out cleared the job
        assert await client.exists(frontier.keys.start) == 0
        assert 0 < await client.pttl(frontier.keys.start_final) <= 60_000
        after = await one.outcomes()
        assert after.accepted and after.refused == 25
        assert await one.wait_turn() == 0  # a new run feeds its start requests again
        await one.clear()
        assert await client.exists(frontier.keys.start, frontier.keys.start_final) == 0
    finally:
        await frontier.close()
