"""``ProjectControl`` (``crawler.control``): a project's live control panel before,
during and after its run, on a real crawl of a local server. The dashboard, the CLI and
a worker's heartbeats all read and steer a project through it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web

from skitter import ConfigError, Crawler, Request, Response, Spider
from skitter.engine import ProjectControl
from skitter.testing import wait_until

FAST = {"LOG_LEVEL": "WARNING", "RETRY_TIMES": 0, "STATS_DUMP": False}


class Site:
    """``/p/N`` pages that each take ``latency`` seconds; ``/bad`` answers 500 until
    ``fixed``. Counts the requests of each path."""

    def __init__(self, latency: float = 0.05) -> None:
        self.latency = latency
        self.hits: dict[str, int] = {}
        self.fixed = False
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if request.path == "/bad" and not self.fixed:
            return web.Response(status=500, text="broken")
        # the site's own pace, so that a crawl is under way when steered
        await asyncio.sleep(self.latency)
        return web.Response(text="<html>ok</html>", content_type="text/html")

    def pages(self) -> int:
        return sum(n for path, n in self.hits.items() if path.startswith("/p/"))


def spider(base: str, pages: int, name: str = "steered") -> type[Spider]:
    class Steered(Spider):
        def start_requests(self) -> Any:
            yield Request(base + "/bad")
            for n in range(pages):
                yield Request(f"{base}/p/{n}")

        def parse(self, response: Response) -> None:
            return None

    Steered.name = name
    return Steered


async def eventually(check: Callable[[], Any]) -> None:
    """A state of the crawl, not an event: polled, with a bound."""
    await wait_until(check)


async def test_before_the_run_the_project_is_new_and_cannot_be_steered(serve: Any) -> None:
    crawler = Crawler(spider("http://127.0.0.1:1", 1), FAST)
    control = crawler.control
    assert isinstance(control, ProjectControl)
    assert (control.name, control.status, control.rate) == ("steered", "new", (None, None))
    assert control.monitor is None and control.failure is None
    assert control.stats is crawler.stats
    for change in (control.pause, control.resume, lambda: control.set_rate(1.0)):
        with pytest.raises(RuntimeError, match="project 'steered' is not running yet"):
            change()
    with pytest.raises(RuntimeError, match="not running yet"):
        control.slot_stats()
    with pytest.raises(RuntimeError, match="not running yet"):
        await control.queue_counts()


async def test_a_running_project_is_paused_resumed_and_rated_through_its_control(
    serve: Any,
) -> None:
    site = Site()
    base = await serve(site.app)
    crawler = Crawler(spider(base, 400), {**FAST, "MAX_RATE": 100.0, "CONCURRENT_REQUESTS": 4})
    control = crawler.control
    run = asyncio.create_task(crawler.run())
    try:
        await eventually(lambda: control.status == "running" and site.pages() >= 4)
        control.pause()
        assert control.status == "paused"
        engine = crawler.engine
        assert engine is not None
        await eventually(lambda: engine.in_flight == 0)
        paused_at = site.pages()
        # a window of real time on a real server: a paused crawl sends nothing in it
        await asyncio.sleep(0.3)
        assert site.pages() == paused_at, "a paused project dispatches nothing"

        with pytest.raises(ConfigError, match=r"rate 500/s is above MAX_RATE \(100/s\)"):
            control.set_rate(500.0)
        assert control.rate == (None, None), "a refused change changes nothing"
        control.set_rate(80.0, 8.0)
        assert control.rate == (80.0, 8.0)
        control.resume()
        assert control.status == "running"
        await eventually(lambda: site.pages() > paused_at)

        slots = control.slot_stats()
        assert [slot["slot"] for slot in slots] == ["127.0.0.1"]
        assert set(slots[0]) == {
            "slot",
            "in_flight",
            "queued",
            "done",
            "failed",
            "concurrency",
            "delay",
            "breaker",
            "backoff",
        }
        counts = await control.queue_counts()
        assert counts.ready + counts.delayed + counts.processing > 0
        monitor = control.monitor
        assert monitor is not None and monitor.counts()[0] > 0
    finally:
        crawler.stop("test over")
        await asyncio.wait_for(run, 10)
    assert control.status == "done"


async def test_failed_tasks_are_listed_and_queued_again_while_it_runs(serve: Any) -> None:
    site = Site(latency=0.02)
    base = await serve(site.app)
    crawler = Crawler(spider(base, 2000), {**FAST, "CONCURRENT_REQUESTS": 2})
    control = crawler.control
    run = asyncio.create_task(crawler.run())
    try:
        await eventually(lambda: control.status == "running" and site.hits.get("/bad") == 1)

        async def failed() -> list[Any]:
            return await control.failed_tasks()

        tasks = await wait_until(failed)
        assert [(t.url, t.reason) for t in tasks] == [(base + "/bad", "HTTP 500")]
        site.fixed = True
        assert await control.retry_failed(reason="HTTP 5") == 1
        assert control.stats.get("scheduler/failed_retried") == 1
        await eventually(lambda: site.hits.get("/bad") == 2)
        assert await control.failed_tasks() == []
    finally:
        crawler.stop("test over")
        await asyncio.wait_for(run, 10)


async def test_the_name_is_the_spiders_once_built(serve: Any) -> None:
    site = Site(latency=0.0)
    base = await serve(site.app)
    crawler = Crawler(spider(base, 1), FAST, name="renamed")
    assert crawler.control.name == "steered"
    await crawler.run()
    assert crawler.control.name == "renamed"
    assert crawler.control.status == "done"


async def test_a_shared_rate_is_applied_here_then_handed_on(serve: Any) -> None:
    """A worker of a distributed job: its UI's ``set_rate`` also writes the job's control
    record (``share_rate``); the record read back is applied with ``apply_rate`` only."""
    crawler = Crawler(spider("http://127.0.0.1:1", 1), {**FAST, "MAX_RATE": 100.0})
    crawler.build()
    control = crawler.control
    assert control.set_rate(5.0, 2.0) is None, "alone, nothing to await"
    shared: list[tuple[float | None, float | None]] = []

    async def share(rate: float | None, burst: float | None) -> None:
        shared.append((rate, burst))

    control.share_rate(share)
    write = control.set_rate(6.0, 3.0)
    assert control.rate == (6.0, 3.0), "applied here at once"
    assert write is not None
    await write
    assert shared == [(6.0, 3.0)]
    with pytest.raises(ConfigError, match="MAX_RATE"):
        control.set_rate(500.0)
    control.apply_rate(7.0, 1.0)
    assert control.rate == (7.0, 1.0)
    assert shared == [(6.0, 3.0)], "neither a refused rate nor the record's own is shared"


async def test_a_stop_before_the_run_is_honoured_when_it_starts(serve: Any) -> None:
    """A stop that comes before the engine exists (a worker of ``--processes`` told to
    stop while it was starting) ends the crawl at once, not never."""
    site = Site(latency=0.0)
    base = await serve(site.app)
    crawler = Crawler(spider(base, 50), {**FAST, "CONCURRENT_REQUESTS": 1})
    crawler.stop("told early")
    stats = await asyncio.wait_for(crawler.run(), 10)
    assert stats["finish_reason"] == "told early"
    assert site.pages() == 0
