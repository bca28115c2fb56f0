"""The JSON control API, in process, against real crawls of a local site."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from skitter import Crawler, Request, run_crawlers
from skitter.dashboard import Dashboard
from skitter.frontier import TaskState

from .conftest import CRAWL_SETTINGS, TreeSite, eventually, running_crawl, tree_spider


async def test_projects_show_status_queues_counts_and_series(serve: Any) -> None:
    spiders = [tree_spider("alpha", ["/broken/a"]), tree_spider("beta")]
    async with running_crawl(serve, spiders) as run:
        monitor = run.crawler.control.monitor
        await eventually(lambda: monitor.counts()[1] == 1 and monitor.counts()[0] >= 5)
        projects = await run.get("api/projects")
        assert [p["name"] for p in projects] == ["alpha", "beta"]
        alpha = projects[0]
        assert alpha["status"] == "running"
        assert (alpha["rate"], alpha["burst"]) == (None, None)
        assert set(alpha["queue"]) == {"ready", "delayed", "processing"}
        assert alpha["queue"]["ready"] + alpha["queue"]["processing"] > 0
        for window in ("5m", "1h", "all"):
            assert alpha["counts"][window]["failure"] == 1
            assert alpha["counts"][window]["success"] >= 5
        assert len(alpha["pages_per_second"]) == 29  # 5 minutes of complete 10 s buckets
        one = await run.get("api/projects/beta")
        assert one["name"] == "beta"


async def test_overview_carries_the_detail_of_the_chosen_project(serve: Any) -> None:
    spiders = [tree_spider("alpha"), tree_spider("beta", ["/broken/b"])]
    async with running_crawl(serve, spiders) as run:
        beta = run.crawlers[1]
        await eventually(lambda: beta.control.monitor.counts()[1] == 1)
        overview = await run.get("api/overview?project=beta")
        assert [p["name"] for p in overview["projects"]] == ["alpha", "beta"]
        detail = overview["detail"]
        assert detail["name"] == "beta"
        assert [f["url"] for f in detail["failures"]] == [run.base + "/broken/b"]
        assert detail["failures"][0]["reason"] == "HTTP 503"
        [failed] = detail["failed_tasks"]
        assert failed["url"] == run.base + "/broken/b"
        assert failed["domain"] == "127.0.0.1"
        assert failed["state"] == "failed"
        assert all(r["ok"] for r in detail["recent"])
        assert detail["slots"][0]["slot"] == "127.0.0.1"
        default = await run.get("api/overview")
        assert default["detail"]["name"] == "alpha"
        unknown = await run.get("api/overview?project=nope")
        assert unknown["detail"]["name"] == "alpha"


async def test_active_tasks_list_what_is_in_flight(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("hanger", ["/hang"])]) as run:
        await eventually(lambda: run.site.hits["/hang"] == 1)
        active = await run.get("api/projects/hanger/active")
        [hang] = [task for task in active if task["url"].endswith("/hang")]
        assert hang["slot"] == "127.0.0.1"
        assert hang["attempt"] == 1
        assert hang["elapsed"] >= 0
        run.site.release_hang.set()
        await eventually(lambda: run.site.hits["/hang"] == 1 and not _has_hang(run.crawler))
        active = await run.get("api/projects/hanger/active")
        assert not [task for task in active if task["url"].endswith("/hang")]


def _has_hang(crawler: Crawler) -> bool:
    return any(task.url.endswith("/hang") for task in crawler.control.monitor.active.values())


async def test_rate_change_applies_at_once_and_is_capped(serve: Any) -> None:
    async with running_crawl(
        serve, [tree_spider("capped")], settings={"MAX_RATE": 50, "MAX_BURST": 100, "RATE": 40}
    ) as run:
        status, body = await run.post("api/projects/capped/rate", {"rate": 500})
        assert status == 400
        assert "above MAX_RATE (50/s)" in body["error"]
        status, body = await run.post("api/projects/capped/rate", {"rate": 5, "burst": 500})
        assert status == 400
        assert "above MAX_BURST" in body["error"]
        assert run.crawler.control.rate == (40, 100)  # a refused change changes nothing

        status, body = await run.post("api/projects/capped/rate", {"rate": 2.5, "burst": 3})
        assert status == 200
        assert (body["rate"], body["burst"]) == (2.5, 3)
        assert run.crawler.control.rate == (2.5, 3)

        for bad in ({"rate": "fast"}, {"rate": True}, {"burst": [1]}, [1, 2]):
            status, body = await run.post("api/projects/capped/rate", bad)
            assert status == 400, bad
            assert body["error"]


async def test_rate_change_slows_the_crawl_down(serve: Any) -> None:
    site = TreeSite(delay=0.0)
    async with running_crawl(serve, [tree_spider("slowed")], site=site) as run:
        loop = asyncio.get_running_loop()
        await eventually(lambda: len(site.arrivals) >= 20)
        status, _ = await run.post("api/projects/slowed/rate", {"rate": 2, "burst": 1})
        assert status == 200
        # Tasks dispatched before the change may still arrive; then the bucket rules.
        await eventually(lambda: run.crawler.engine.in_flight <= 1)
        start = loop.time()
        await asyncio.sleep(1.0)  # a window of real time: the rate's bound is checked over it
        # At most the one token in the bucket, plus 2/s over the window, plus the one
        # request that may have been in flight.
        assert site.arrivals_between(start, loop.time()) <= 1 + 2 * (loop.time() - start) + 1


async def test_pause_stops_dispatching_and_resume_restarts(serve: Any) -> None:
    site = TreeSite(delay=0.0)
    async with running_crawl(serve, [tree_spider("paused")], site=site) as run:
        await eventually(lambda: len(site.arrivals) >= 5)
        status, body = await run.post("api/projects/paused/pause", {})
        assert (status, body["status"]) == (200, "paused")
        await eventually(lambda: run.crawler.engine.in_flight == 0)
        seen = len(site.arrivals)
        # a window of real time on a real server: a paused crawl sends nothing in it
        await asyncio.sleep(0.3)
        assert len(site.arrivals) == seen
        status, body = await run.post("api/projects/paused/resume")
        assert (status, body["status"]) == (200, "running")
        await eventually(lambda: len(site.arrivals) > seen)


async def test_retry_failed_by_domain_and_by_reason(serve: Any) -> None:
    site = TreeSite()

    def on_localhost(base: str) -> Request:
        return Request(base.replace("127.0.0.1", "localhost") + "/flaky/two", priority=100)

    spider = tree_spider("retry", ["/flaky/one", on_localhost, "/broken/three"])
    async with running_crawl(serve, [spider], site=site) as run:
        await eventually(lambda: run.crawler.control.monitor.counts()[1] == 3)
        failed = await run.get("api/projects/retry/failed")
        assert {f["reason"] for f in failed} == {"HTTP 500", "HTTP 503"}

        status, body = await run.post("api/projects/retry/retry", {"domain": "localhost"})
        assert (status, body) == (200, {"retried": 1})
        await eventually(lambda: site.hits["/flaky/two"] == 2)

        status, body = await run.post("api/projects/retry/retry", {"reason": "HTTP 503"})
        assert (status, body) == (200, {"retried": 1})
        await eventually(lambda: run.crawler.control.monitor.counts()[1] == 4)  # failed again

        status, body = await run.post("api/projects/retry/retry", {})
        assert (status, body) == (200, {"retried": 2})  # /flaky/one and /broken/three
        await eventually(lambda: site.hits["/flaky/one"] == 2)
        remaining = await eventually(lambda: _failed_urls(run))
        assert remaining == [run.base + "/broken/three"]

        status, body = await run.post("api/projects/retry/retry", {"domain": 3})
        assert status == 400
        assert "domain must be a string" in body["error"]


async def test_requeue_bad_by_reason(serve: Any) -> None:
    def not_http(base: str) -> Request:
        return Request(base.replace("http://", "ftp://") + "/file", priority=100)

    spider = tree_spider("bad", [not_http])
    async with running_crawl(serve, [spider]) as run:
        frontier = run.crawler.engine.projects[0].scheduler.frontier  # type: ignore[union-attr]

        async def bad_tasks() -> list[Any] | None:
            return await frontier.tasks(TaskState.BAD) or None

        [bad] = await eventually(bad_tasks)
        assert "only http:// and https://" in bad.reason
        status, body = await run.post("api/projects/bad/requeue-bad", {"reason": "nothing like it"})
        assert (status, body) == (200, {"requeued": 0})
        status, body = await run.post("api/projects/bad/requeue-bad", {"reason": "https://"})
        assert (status, body) == (200, {"requeued": 1})
        assert run.crawler.stats.get("scheduler/bad_requeued") == 1

        async def bad_again() -> list[Any] | None:
            tasks = await frontier.tasks(TaskState.BAD)
            return tasks if tasks and tasks[0].lastcrawltime > bad.lastcrawltime else None

        await eventually(bad_again)  # run again with the same code: bad again
        status, body = await run.post("api/projects/bad/requeue-bad", {"domain": 3})
        assert status == 400


async def _failed_urls(run: Any) -> list[str] | None:
    urls = [f["url"] for f in await run.get("api/projects/retry/failed")]
    return urls if urls == [run.base + "/broken/three"] else None


async def test_unknown_projects_and_finished_crawls_are_clear_errors(serve: Any) -> None:
    site = TreeSite()
    base = await serve(site.app)

    class Small(tree_spider("small")):  # type: ignore[misc]
        def parse(self, response: Any) -> Any:
            return None

    crawler = Crawler(Small, {**CRAWL_SETTINGS, "BASE": base})
    async with Dashboard([crawler.control]) as dashboard, aiohttp.ClientSession() as http:
        async with http.get(dashboard.url + "api/projects/small") as resp:
            assert (await resp.json())["status"] == "new"
        await run_crawlers([crawler])
        async with http.get(dashboard.url + "api/session") as resp:
            csrf = (await resp.json())["csrf"]
        headers = {"X-Skitter-CSRF": csrf}
        async with http.post(dashboard.url + "api/projects/small/pause", headers=headers) as resp:
            assert resp.status == 409
            assert (await resp.json())["error"] == "project 'small' has finished"
        async with http.post(dashboard.url + "api/projects/nope/pause", headers=headers) as resp:
            assert resp.status == 404
            assert "no project named 'nope'" in (await resp.json())["error"]
        async with http.get(dashboard.url + "api/projects/small") as resp:
            summary = await resp.json()
        assert summary["status"] == "done"
        assert summary["counts"]["all"] == {"success": 1, "failure": 0}
        assert summary["finish_reason"] == "finished"


async def test_slots_list_every_key_the_crawler_reports(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("slots")]) as run:
        await eventually(lambda: run.crawler.control.monitor.counts()[0] >= 1)
        [slot] = await run.get("api/projects/slots/slots")
        assert slot["slot"] == "127.0.0.1"
        assert slot["concurrency"] == 4
        # Whatever the crawler reports per slot is passed through, key for key.
        assert set(slot) == set(run.crawler.control.slot_stats()[0])
        assert {"slot", "in_flight", "concurrency", "delay"} <= set(slot)


async def test_pages_a_recrawl_found_unchanged_are_shown(serve: Any) -> None:
    """Issue 16: a recrawl's 304 to the last validators is counted and shown."""
    from aiohttp import web

    from skitter import Response, Spider

    async def page(request: web.Request) -> web.Response:
        headers = {"ETag": '"v1"'}
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers=headers)
        return web.Response(text="page", headers=headers)

    async def hub(request: web.Request) -> web.Response:
        return web.Response(text="hub")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/hub", hub)
    base = await serve(app)

    class Again(Spider):
        name = "again"

        async def start(self) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)

        def parse_page(self, response: Response) -> Any:
            yield Request(f"{base}/hub", self.parse_hub)

        def parse_hub(self, response: Response) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)

    crawler = Crawler(Again, CRAWL_SETTINGS)
    async with Dashboard([crawler.control]) as dashboard, aiohttp.ClientSession() as http:
        await run_crawlers([crawler])
        async with http.get(dashboard.url + "api/projects/again") as resp:
            summary = await resp.json()
    assert summary["unchanged"] == 1
    assert summary["counts"]["all"]["success"] == 3  # an unchanged page is no failure
