"""The engine and the project read the time from the injected clock, so the limits that
are measured in minutes (CLOSESPIDER_TIMEOUT, a worker's idle grace) are tested on a
``FakeClock`` in milliseconds."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.engine import Engine
from skitter.engine._idle import IdleGrace
from skitter.testing import FakeClock, wait_until

FAST = {"CONCURRENT_REQUESTS": 1}


async def chain_site(serve: Any) -> tuple[str, list[str]]:
    """/0 links to /1, /1 to /2, and so on without end."""
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text=request.path, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{n}", handle)
    return await serve(app), hits


def chain_spider(base: str, clock: FakeClock, step: float, pages: int | None) -> type[Spider]:
    """Follows the chain, moving the clock ``step`` seconds per page; stops after
    ``pages`` pages (None: never)."""

    class Chain(Spider):
        name = "chain"
        start_urls = [f"{base}/0"]

        def parse(self, response: Response) -> Any:
            clock.advance(step)
            n = int(response.url.rsplit("/", 1)[1]) + 1
            if pages is None or n < pages:
                yield Request(f"{base}/{n}")

    return Chain


def spy_on_idle(engine: Engine) -> list[bool]:
    """The engine's verdicts on its idle grace from now on: an event to wait for, where a
    sleep would guess how soon the engine looks again."""
    verdicts: list[bool] = []
    real = engine._idle.long_enough

    def long_enough() -> bool:
        verdicts.append(real())
        return verdicts[-1]

    engine._idle.long_enough = long_enough  # type: ignore[method-assign]
    return verdicts


def engine_for(crawler: Crawler, **engine_kwargs: Any) -> Engine:
    return Engine([crawler.build()], concurrency=1, clock=crawler.clock, **engine_kwargs)


async def test_closespider_timeout_fires_on_the_projects_clock(serve: Any) -> None:
    base, hits = await chain_site(serve)
    clock = FakeClock()
    spider = chain_spider(base, clock, step=60.0, pages=None)
    crawler = Crawler(spider, {**FAST, "CLOSESPIDER_TIMEOUT": 300}, clock=clock)
    engine = engine_for(crawler, housekeeping_interval=0.01)
    await asyncio.wait_for(engine.run(), 10)
    stats = crawler.stats.to_dict()
    assert stats["finish_reason"] == "closespider_timeout"
    assert len(hits) >= 5  # 5 pages x 60 s: not before
    assert stats["elapsed_time_seconds"] >= 300  # fake seconds
    assert stats["start_time"] == clock.time() - stats["elapsed_time_seconds"]


async def test_a_crawl_shorter_than_closespider_timeout_finishes(serve: Any) -> None:
    base, hits = await chain_site(serve)
    clock = FakeClock()
    spider = chain_spider(base, clock, step=74.0, pages=4)  # 296 s of 300
    crawler = Crawler(spider, {**FAST, "CLOSESPIDER_TIMEOUT": 300}, clock=clock)
    engine = engine_for(crawler, housekeeping_interval=0.01)
    await asyncio.wait_for(engine.run(), 10)
    assert crawler.stats.get("finish_reason") == "finished"
    assert hits == ["/0", "/1", "/2", "/3"]


async def test_a_worker_ends_only_after_the_idle_grace_on_the_engines_clock(
    serve: Any,
) -> None:
    base, hits = await chain_site(serve)
    clock = FakeClock()
    crawler = Crawler(chain_spider(base, clock, step=0.0, pages=1), FAST, clock=clock)
    engine = engine_for(crawler, idle_grace=300.0)
    running = asyncio.create_task(engine.run())
    await wait_until(lambda: engine._idle.since is not None)  # the engine's own state
    assert hits == ["/0"]
    looks = spy_on_idle(engine)
    clock.advance(299.0)
    engine.wake()
    await wait_until(lambda: looks)  # it looked at its idle state again, once woken
    assert looks[0] is False and not running.done(), "idle 299 s of a 300 s grace: waits"
    clock.advance(1.0)
    engine.wake()
    await asyncio.wait_for(running, 5)
    assert crawler.stats.get("finish_reason") == "finished"


def test_idle_grace_counts_from_the_first_idle_look() -> None:
    clock = FakeClock()
    idle = IdleGrace(10.0, clock)
    assert not idle.long_enough()  # starts the idle state
    clock.advance(9.9)
    assert not idle.long_enough()
    clock.advance(0.1)
    assert idle.long_enough()
    idle.busy()  # work came: the grace starts over
    assert idle.since is None
    assert not idle.long_enough()


def test_no_grace_is_done_at_once_and_a_negative_one_never() -> None:
    clock = FakeClock()
    assert IdleGrace(0.0, clock).long_enough()
    forever = IdleGrace(-1.0, clock)
    assert not forever.long_enough()
    clock.advance(1e9)
    assert not forever.long_enough()
