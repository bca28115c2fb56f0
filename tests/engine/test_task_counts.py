"""The backlog in plain sight (issue 27, item 13): while one slot lets one download
through at a time, the tasks waiting in the frontier, leased and waiting for that slot,
in flight and done are four numbers that add up, the same in the progress line, the
stats, ``/metrics`` and the dashboard's summary. A real, gated site on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from skitter import Crawler, Request, Response, Spider
from skitter.cli._display import render_progress
from skitter.cli._run import _snapshot
from skitter.dashboard._metrics import render_metrics
from skitter.dashboard._views import project_summary
from skitter.engine import TaskCounts
from skitter.testing import wait_until

PAGES = 30
SETTINGS = {
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,  # one download at a time: the rest wait
    "SCHEDULER_MAX_HELD": 8,  # leased at most: the rest wait in the frontier
    "ROBOTSTXT_OBEY": False,
}


async def gated_site(serve: Any) -> tuple[str, asyncio.Event, list[str]]:
    gate, arrived = asyncio.Event(), []

    async def page(request: web.Request) -> web.Response:
        arrived.append(request.path)
        await gate.wait()
        return web.Response(text="<p>ok</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return str(await serve(app)), gate, arrived


def pages_spider(base: str) -> type[Spider]:
    class Pages(Spider):
        name = "pages"

        def start_requests(self) -> Any:
            for n in range(PAGES):
                yield Request(f"{base}/p/{n}")

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    return Pages


async def settled(crawler: Crawler) -> TaskCounts:
    """The counts once the engine has looked at the frontier with everything queued
    (its upkeep looks about once a second)."""

    def all_counted() -> TaskCounts | None:
        counts = crawler.control.task_counts()
        return counts if counts.waiting + counts.leased + counts.in_flight == PAGES else None

    return await wait_until(all_counted, timeout=20)


def metric_samples(text: str) -> dict[tuple[str, str], float]:
    return {
        (sample.name, sample.labels.get("state", "")): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.labels.get("project") == "pages"
    }


async def test_the_backlog_is_four_separate_numbers_everywhere(serve: Any) -> None:
    base, gate, arrived = await gated_site(serve)
    crawler = Crawler(pages_spider(base), SETTINGS)
    run = asyncio.create_task(crawler.run())
    try:
        counts = await settled(crawler)
        assert len(arrived) == 1  # one download at a time
        assert counts.in_flight == 1
        assert counts.leased == SETTINGS["SCHEDULER_MAX_HELD"]
        assert counts.waiting == PAGES - 1 - counts.leased
        assert (counts.delayed, counts.done) == (0, 0)
        frontier = await crawler.control.queue_counts()
        assert frontier.processing == counts.leased + counts.in_flight  # leased by us

        # the progress line
        snapshot = _snapshot([crawler])
        for field in ("waiting", "leased", "in_flight", "done"):
            assert snapshot[field] == getattr(counts, field), field
        line = render_progress(snapshot, 0.0).plain
        assert f"waiting {counts.waiting} · for a slot {counts.leased} · in flight 1" in line
        # the stats
        stats = crawler.stats
        assert stats.get("tasks/waiting") == counts.waiting
        assert stats.get("tasks/leased") == counts.leased
        assert stats.get("tasks/in_flight") == 1
        # the dashboard's summary
        summary = await project_summary(crawler.control)
        assert summary["tasks"] == {
            "waiting": counts.waiting,
            "delayed": 0,
            "leased": counts.leased,
            "in_flight": 1,
            "done": 0,
        }
        assert summary["active"] == 1
        # /metrics
        found = metric_samples(await render_metrics([crawler.control]))
        assert found[("skitter_tasks", "waiting")] == counts.waiting
        assert found[("skitter_tasks", "leased")] == counts.leased
        assert found[("skitter_tasks", "in_flight")] == 1
        assert found[("skitter_project_active_tasks", "")] == 1
        assert any(name == "skitter_queue_tasks" for name, _ in found)  # kept
    finally:
        gate.set()
        stats_end = await asyncio.wait_for(run, 30)
    assert stats_end["tasks/done"] == PAGES
    assert (stats_end["tasks/waiting"], stats_end["tasks/leased"]) == (0, 0)
    assert stats_end["tasks/in_flight"] == 0
    assert crawler.control.task_counts() == TaskCounts(done=PAGES)
