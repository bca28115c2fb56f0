"""The backlog of a distributed job, as the cluster dashboard shows it (issue 27, item
13): tasks waiting in the job's frontier, leased by a worker and waiting for their slot,
in flight, done; a task parked in a worker's slot queue is counted as leased, not
listed as in flight, and the job's stats carry the job's numbers, not one worker's.
A real worker (a ``Crawler`` on Redis) against a gated site on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Response, Spider
from skitter._clock import SystemClock
from skitter.dashboard._cluster import ClusterProject
from skitter.dashboard._views import project_detail, project_summary
from skitter.engine import TaskCounts
from skitter.testing import wait_until

PAGES = 20


async def gated_site(serve: Any) -> tuple[str, asyncio.Event]:
    gate = asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        await gate.wait()
        return web.Response(text="<p>ok</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return str(await serve(app)), gate


def pages_spider(base: str) -> type[Spider]:
    class Pages(Spider):
        name = "pages"

        def start_requests(self) -> Any:
            for n in range(PAGES):
                yield Request(f"{base}/p/{n}")

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    return Pages


async def test_a_jobs_parked_tasks_are_leased_not_in_flight(
    serve: Any, redis_url: str, client: Redis
) -> None:
    base, gate = await gated_site(serve)
    settings = {
        "CONCURRENT_REQUESTS": 4,  # a worker holds up to 8 leases
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,  # and downloads one of them at a time
        "ROBOTSTXT_OBEY": False,
        "WORKER_IDLE_TIMEOUT": 0.5,
        "STATS_DUMP": False,
    }
    worker = Crawler(pages_spider(base), settings, redis_url=redis_url, job="backlog")
    run = asyncio.create_task(worker.run())
    view = ClusterProject(client, "pages", "backlog", clock=SystemClock())
    try:

        async def settled() -> TaskCounts | None:
            await view.refresh()
            counts = view.task_counts()
            whole = counts.in_flight == 1 and counts.waiting + counts.leased + 1 == PAGES
            return counts if whole else None

        counts = await wait_until(settled, timeout=20)
        assert counts.leased >= 1 and counts.waiting >= 1
        frontier = await view.queue_counts()
        assert frontier.processing == counts.leased + counts.in_flight
        monitor = view.monitor
        assert monitor is not None
        assert len(monitor.active) == 1  # the one downloading, not the parked ones
        summary = await project_summary(view)
        assert summary["tasks"]["leased"] == counts.leased
        assert summary["tasks"]["in_flight"] == summary["active"] == 1
        detail = await project_detail(view)
        assert detail["in_flight"] == 1 and len(detail["active"]) == 1
        assert view.stats.get("tasks/leased") == counts.leased  # the job's, from the beats
        assert view.stats.get("tasks/in_flight") == 1
    finally:
        gate.set()
        stats = await asyncio.wait_for(run, 60)
    assert stats["tasks/done"] == PAGES
