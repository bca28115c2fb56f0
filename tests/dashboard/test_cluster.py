"""``skitter dashboard --redis``: the cluster view, against real workers on a real Redis.

The workers are ``Crawler`` objects with ``redis_url`` running in this process, each on
its own engine, crawling a local site; the dashboard reaches them only through Redis
(the control record they poll, the heartbeats and counters they write), exactly as it
reaches workers on other machines. The site's record of arrivals is how each test sees
a change take effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter._tasks import cancel_and_wait
from skitter.dashboard import Dashboard
from skitter.dashboard._source import ClusterSource
from skitter.frontier import RedisFrontier
from skitter.redis import JobKeys
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

from .conftest import CRAWL_SETTINGS, TreeSite, eventually, open_page, screenshot, tree_spider

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

SRC = str(Path(__file__).resolve().parents[2] / "src")
JOB = "nightly"


class ClusterSite(TreeSite):
    """The tree, plus ``/always500/NAME``, which fails with 500 every time."""

    def __init__(self, delay: float = 0.01) -> None:
        super().__init__(delay)
        self.app.router.add_get("/always500/{name}", self.always500)

    async def always500(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        return web.Response(text="down", status=500, content_type="text/html")


@dataclass
class Cluster:
    """Workers of one job, the cluster dashboard, and an HTTP session for its API."""

    redis_url: str
    site: ClusterSite
    base: str
    spider: type[Spider]
    settings: dict[str, Any]
    source: ClusterSource
    dashboard: Dashboard
    http: aiohttp.ClientSession
    workers: list[Crawler] = field(default_factory=list)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.dashboard.url

    @property
    def name(self) -> str:
        return f"{self.spider.name}:{JOB}"

    def add_worker(self, **settings: Any) -> Crawler:
        crawler = Crawler(
            self.spider, {**self.settings, **settings}, redis_url=self.redis_url, job=JOB
        )
        self.workers.append(crawler)
        self.tasks.append(asyncio.create_task(crawler.run()))
        return crawler

    async def get(self, path: str) -> Any:
        async with self.http.get(self.url + path) as resp:
            assert resp.status == 200, (resp.status, await resp.text())
            return await resp.json()

    async def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.get(self.url + "api/session") as resp:
            csrf = (await resp.json())["csrf"]
        headers = {"X-Skitter-CSRF": csrf}
        async with self.http.post(self.url + path, json=body, headers=headers) as resp:
            return resp.status, await resp.json()

    async def project(self) -> dict[str, Any]:
        return dict(await self.get(f"api/projects/{self.name}"))

    def arrivals_in(self, seconds: float) -> Any:
        """Arrivals at the site during the next ``seconds`` (an awaitable count)."""

        async def count() -> int:
            loop = asyncio.get_running_loop()
            start = loop.time()
            await asyncio.sleep(seconds)  # a window of real time, whose arrivals the caller bounds
            return self.site.arrivals_between(start, loop.time())

        return count()


@contextlib.asynccontextmanager
async def cluster(
    serve: Any,
    redis_url: str,
    spider: type[Spider],
    *,
    workers: int = 2,
    site: ClusterSite | None = None,
    **settings: Any,
) -> AsyncIterator[Cluster]:
    """The dashboard first (so its counters start from zero), then ``workers`` workers."""
    site = site or ClusterSite()
    base = await serve(site.app)
    merged = {
        **CRAWL_SETTINGS,
        "BASE": base,
        "WORKER_IDLE_TIMEOUT": -1,  # the test stops them
        "LEASE_SECONDS": 5,
        **settings,
    }
    source = ClusterSource(redis_url, interval=0.2, rescan=0.2)
    run: Cluster | None = None
    try:
        async with (
            source,
            Dashboard(source, clock=time.time) as dashboard,
            aiohttp.ClientSession() as http,
        ):
            run = Cluster(redis_url, site, base, spider, merged, source, dashboard, http)
            for _ in range(workers):
                run.add_worker()
            if workers:
                await eventually(lambda: _alive(run) == workers)
            yield run
    finally:
        site.release_hang.set()
        if run is not None:
            for crawler in run.workers:
                crawler.stop("test over")
            _done, pending = await asyncio.wait(run.tasks, timeout=15)
            for task in pending:
                await cancel_and_wait(task)
            assert not pending, f"{len(pending)} workers did not stop within 15 s of stop()"
            for task in run.tasks:
                task.result()


def _alive(run: Cluster) -> int:
    projects = [p for p in run.source if p.name == run.name]
    return len(projects[0].alive_workers()) if projects else 0


# -- the projects table ------------------------------------------------------------------------
async def test_jobs_appear_with_their_queue_counts_and_workers(serve: Any, redis_url: str) -> None:
    # A job with work queued and no worker: pushed the way `skitter push` does.
    frontier = RedisFrontier(redis_url, project="feed", job="later")
    now = time.time()
    requests = [Request(f"http://127.0.0.1:9/{i}") for i in range(4)]
    requests.append(Request("http://127.0.0.1:9/due-later", exetime=now + 3600))
    await frontier.push(requests, now)
    await frontier.close()

    spider = tree_spider("tree")
    async with cluster(serve, redis_url, spider, workers=2) as run:
        projects = {p["name"]: p for p in await run.get("api/projects")}
        assert set(projects) == {"feed:later", run.name}
        waiting = projects["feed:later"]
        assert waiting["queue"] == {"ready": 4, "delayed": 1, "processing": 0}
        assert (waiting["status"], waiting["workers"], waiting["job"]) == ("idle", 0, "later")

        await eventually(lambda: run.workers[0].control.monitor.counts()[0] >= 5)
        crawling = await run.project()
        assert crawling["status"] == "running"
        assert crawling["workers"] == 2
        assert crawling["queue"]["ready"] + crawling["queue"]["processing"] > 0
        # The job's counters add up every worker's finished tasks, sampled every second.
        await eventually(lambda: _counted(run, at_least=10))
        crawling = await run.project()
        assert crawling["counts"]["5m"]["success"] >= 10
        assert crawling["counts"]["all"]["success"] >= crawling["counts"]["5m"]["success"]
        assert len(crawling["pages_per_second"]) == 29

        # Leased tasks are listed (between two workers' leases there may be none for an
        # instant: the crawl of the endless site goes on, so some are soon again).
        detail = await eventually(lambda: _detail_with_active(run))
        assert all(task["url"].startswith(run.base) for task in detail["active"])
        assert detail["recent"] and all(r["ok"] for r in detail["recent"])
        assert detail["slots"][0]["slot"] == "127.0.0.1"

        async with run.http.get(run.url + "metrics") as resp:
            metrics = await resp.text()
        assert f'skitter_project_workers{{project="{run.name}"}} 2' in metrics
        assert 'skitter_queue_tasks{project="feed:later",queue="ready"} 4' in metrics


async def _detail_with_active(run: Cluster) -> dict[str, Any] | None:
    detail = dict(await run.get(f"api/projects/{run.name}/detail"))
    return detail if detail["active"] else None


async def _counted(run: Cluster, at_least: int) -> bool:
    project = await run.project()
    return bool(project["counts"]["5m"]["success"] >= at_least)


async def test_only_the_jobs_asked_for_are_shown(serve: Any, redis_url: str) -> None:
    for job in ("one", "two"):
        frontier = RedisFrontier(redis_url, project="feed", job=job)
        await frontier.push([Request("http://127.0.0.1:9/x")], time.time())
        await frontier.close()
    async with ClusterSource(redis_url, ["two"]) as source:
        assert [project.name for project in source] == ["feed:two"]


async def test_a_job_whose_state_vanished_shows_as_failed_and_is_never_created(
    redis_url: str,
) -> None:
    frontier = RedisFrontier(redis_url, project="feed", job="lost")
    await frontier.push([Request("http://127.0.0.1:9/x")], time.time())
    keys = frontier.keys
    async with ClusterSource(redis_url, ["lost"], interval=3600) as source:
        [job] = list(source)
        assert job.status == "idle"
        await frontier.client.flushdb()  # Redis lost the state (the roster is gone too)
        await frontier.client.hset(keys.workers, "w", b'{"status": "running"}')
        await job.refresh()
        assert job.status == "failed"
        assert "job state lost (Redis restarted without persistence?)" in str(
            job.stats.get("finish_error")
        )
        assert (await job.queue_counts()).queued == 0
        assert await frontier.client.keys("*") == [keys.workers.encode()], "nothing created"
        new_run = RedisFrontier(redis_url, project="feed", job="lost")
        await new_run.push([Request("http://127.0.0.1:9/y")], time.time())
        await new_run.close()
        await job.refresh()
        assert (job.lost, job.status) == (None, "idle")
    await frontier.close()


# -- steering ------------------------------------------------------------------------------------
async def test_a_rate_set_on_the_dashboard_slows_every_worker(serve: Any, redis_url: str) -> None:
    async with cluster(serve, redis_url, tree_spider("tree"), MAX_RATE=1000) as run:
        # Unlimited, and crawling (how fast is the machine's business, not the test's:
        # a floor on a wall-clock rate fails on a loaded machine).
        assert all(worker.control.rate == (None, None) for worker in run.workers)
        await eventually(lambda: len(run.site.arrivals) > 20)

        status, body = await run.post(f"api/projects/{run.name}/rate", {"rate": 4, "burst": 1})
        assert status == 200, body
        assert (body["rate"], body["burst"]) == (4, 1)
        # Each worker applies the record at its next heartbeat.
        await eventually(lambda: all(w.control.rate == (4, 1) for w in run.workers))
        await eventually(lambda: all(w.engine.in_flight == 0 for w in run.workers))
        # One bucket for the whole job: 4/s in all, not 4/s per worker.
        seconds = 2.0
        arrived = await run.arrivals_in(seconds)
        assert 0 < arrived <= 1 + 4 * seconds + 2
        assert (await run.project())["rate"] == 4

        # A worker that joins later follows the record from its first heartbeat.
        late = run.add_worker()
        await eventually(lambda: late.control.status == "running" and late.control.rate == (4, 1))


async def test_a_rate_above_the_workers_max_is_refused(serve: Any, redis_url: str) -> None:
    async with cluster(serve, redis_url, tree_spider("tree"), MAX_RATE=10, MAX_BURST=20) as run:
        path = f"api/projects/{run.name}/rate"
        status, body = await run.post(path, {"rate": 50})
        assert status == 400
        assert re.fullmatch(r"rate 50/s is above MAX_RATE \(10/s\) of worker .+", body["error"])
        status, body = await run.post(path, {"rate": 5, "burst": 30})
        assert status == 400
        assert body["error"].startswith("burst 30 is above MAX_BURST (20) of worker ")
        status, body = await run.post(path, {"rate": None})
        assert status == 400
        assert body["error"].startswith("an unlimited rate is above MAX_RATE (10/s)")
        # Nothing was written: the workers keep their own rate.
        control = await run.source[0].control.read()
        assert control[0].rate_seq == 0
        assert all(worker.control.rate == (None, None) for worker in run.workers)
        # Within the limits it goes through, the default burst capped by MAX_BURST.
        status, body = await run.post(path, {"rate": 5})
        assert status == 200, body
        assert (body["rate"], body["burst"]) == (5, 20)
        await eventually(lambda: all(w.control.rate == (5, 20) for w in run.workers))


async def test_pause_stops_arrivals_and_resume_restarts_them(serve: Any, redis_url: str) -> None:
    async with cluster(serve, redis_url, tree_spider("tree")) as run:
        await eventually(lambda: len(run.site.arrivals) > 20)
        status, body = await run.post(f"api/projects/{run.name}/pause")
        assert (status, body["status"]) == (200, "paused")
        await eventually(lambda: all(w.control.status == "paused" for w in run.workers))
        await eventually(lambda: all(w.engine.in_flight == 0 for w in run.workers))
        assert await run.arrivals_in(1.0) == 0
        assert (await run.project())["status"] == "paused"

        status, body = await run.post(f"api/projects/{run.name}/resume")
        assert (status, body["status"]) == (200, "running")
        seen = len(run.site.arrivals)
        await eventually(lambda: len(run.site.arrivals) > seen + 10)
        assert all(w.control.status == "running" for w in run.workers)


async def test_a_worker_starts_paused_if_the_job_was_paused_before(
    serve: Any, redis_url: str
) -> None:
    from redis.asyncio import Redis

    from skitter.cluster import JobControl

    client = Redis.from_url(redis_url)
    try:
        await JobControl(client, JobKeys.for_job("tree", JOB)).set_paused(True, time.time())
    finally:
        await client.aclose()
    async with cluster(serve, redis_url, tree_spider("tree"), workers=0) as run:
        worker = run.add_worker()
        await eventually(lambda: _alive(run) == 1)
        assert worker.control.status == "paused"
        assert await run.arrivals_in(1.0) == 0
        assert (await run.project())["status"] == "paused"
        status, _ = await run.post(f"api/projects/{run.name}/resume")
        assert status == 200
        await eventually(lambda: len(run.site.arrivals) > 5)


async def test_a_failed_task_is_listed_and_retried_from_the_dashboard(
    serve: Any, redis_url: str
) -> None:
    spider = tree_spider("tree", ["/always500/one"])
    async with cluster(serve, redis_url, spider, RATE=50) as run:
        url = run.base + "/always500/one"
        failed = await eventually(lambda: _failed(run))
        assert [(t["url"], t["reason"], t["domain"]) for t in failed] == [
            (url, "HTTP 500", "127.0.0.1")
        ]
        # Recent failures and the failure counters come with the next heartbeat.
        failures = await eventually(lambda: _recent_failures(run))
        assert (failures[0]["url"], failures[0]["reason"]) == (url, "HTTP 500")
        await eventually(lambda: _failures_counted(run))

        status, body = await run.post(f"api/projects/{run.name}/retry", {"reason": "HTTP 500"})
        assert (status, body) == (200, {"retried": 1})
        await eventually(lambda: run.site.hits["/always500/one"] == 2)
        # It failed again, and is listed again.
        await eventually(lambda: _failed(run))
        status, body = await run.post(f"api/projects/{run.name}/retry", {"domain": "example.org"})
        assert (status, body) == (200, {"retried": 0})


async def _failed(run: Cluster) -> list[dict[str, Any]]:
    return list(await run.get(f"api/projects/{run.name}/failed"))


async def _recent_failures(run: Cluster) -> list[dict[str, Any]]:
    return list(await run.get(f"api/projects/{run.name}/failures"))


async def _failures_counted(run: Cluster) -> bool:
    return bool((await run.project())["counts"]["all"]["failure"] >= 1)


async def test_crawled_markup_reaches_the_api_as_data_only(serve: Any, redis_url: str) -> None:
    payload = "/x/<script>window.__pwned='url'</script>"
    spider = tree_spider("tree", [payload])
    async with cluster(serve, redis_url, spider, RATE=20, workers=1) as run:
        failed = await eventually(lambda: _failed(run))
        # a JSON string, as crawled (the request escaped the URL as Scrapy does)
        assert failed[0]["url"] == Request(run.base + payload).url
        async with run.http.get(run.url + f"api/projects/{run.name}/failed") as resp:
            assert resp.headers["Content-Type"].startswith("application/json")
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
        async with run.http.get(run.url) as resp:
            page = await resp.text()
        assert "__pwned" not in page  # the page carries no crawled data: scripts fill it in


# -- the command -----------------------------------------------------------------------------------
async def test_skitter_dashboard_prints_its_url_and_serves_the_jobs(redis_url: str) -> None:
    frontier = RedisFrontier(redis_url, project="feed", job=JOB)
    await frontier.push([Request("http://127.0.0.1:9/x")], time.time())
    await frontier.close()
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "skitter", "dashboard", "--redis", redis_url, "--job", JOB],
        env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        match = re.search(rb"Dashboard: (http://127\.0\.0\.1:\d+/)", line)
        assert match, line
        async with (
            aiohttp.ClientSession() as http,
            http.get(match[1].decode() + "api/projects") as resp,
        ):
            [project] = await resp.json()
        assert project["name"] == f"feed:{JOB}"
        assert project["queue"]["ready"] == 1
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
    assert proc.returncode == 0


async def test_the_command_refuses_to_listen_beyond_loopback_without_a_token(
    redis_url: str,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "skitter", "dashboard", "--redis", redis_url, "--host", "0.0.0.0"],
        env={**os.environ, "PYTHONPATH": SRC, "SKITTER_UI_TOKEN": ""},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 2
    assert b"without a token" in out


def test_job_keys_name_the_control_record_and_the_roster() -> None:
    keys = JobKeys.for_job("shop", "nightly")
    assert keys.control == "skitter:{shop:nightly}:control"
    assert keys.workers == "skitter:{shop:nightly}:workers"
    assert keys.control not in keys.all()  # not a frontier script's key


# -- in a browser ----------------------------------------------------------------------------------
async def test_the_cluster_view_in_a_browser(
    serve: Any,
    redis_url: str,
    browser: Any,
) -> None:
    from playwright.async_api import expect

    markup = "/x/<img src=x onerror=\"window.__pwned='url'\">"
    name = "xss<img src=x onerror=window.__pwned=1>"
    spider = tree_spider(name, ["/always500/one", markup])
    async with cluster(serve, redis_url, spider, RATE=50, MAX_RATE=100) as run:
        page, errors = await open_page(browser, run)
        row = page.locator("#projects tr", has_text=f"{name}:{JOB}")
        await expect(row.locator(".status")).to_have_text("running")
        await expect(row.locator(".workers")).to_have_text(" 2 workers")
        failed = page.locator("#failed tbody tr")
        await expect(failed).to_have_count(2)
        await expect(page.locator("#failed")).to_contain_text(Request(run.base + markup).url)
        await expect(page.locator("#active tbody tr").first).to_be_visible()
        await screenshot(page, "cluster-overview")

        # Retry those like the task that failed with 500 (both did, on one domain): the
        # workers fetch them again.
        await failed.filter(has_text="/always500/one").locator("button.retry").click()
        await expect(page.locator("#retry-message")).to_have_text("requeued 2 tasks")
        await eventually(lambda: run.site.hits["/always500/one"] == 2)

        # Pause every worker from one button; then resume them.
        await row.locator("button.toggle", has_text="Pause").click()
        await expect(row.locator(".status")).to_have_text("paused")
        await eventually(lambda: all(w.control.status == "paused" for w in run.workers))
        await eventually(lambda: all(w.engine.in_flight == 0 for w in run.workers))
        assert await run.arrivals_in(0.5) == 0
        await screenshot(page, "cluster-paused")
        await row.locator("button.toggle", has_text="Resume").click()
        await expect(row.locator(".status")).to_have_text("running")
        seen = len(run.site.arrivals)
        await eventually(lambda: len(run.site.arrivals) > seen)

        # The rate: refused above the workers' MAX_RATE, applied by all of them below it.
        await row.locator("button.rate").click()
        editor = row.locator("form.rate-editor")
        await editor.locator('input[name="rate"]').fill("5000")
        await editor.locator('button[type="submit"]').click()
        await expect(editor.locator(".error")).to_contain_text("above MAX_RATE (100/s)")
        await editor.locator('input[name="rate"]').fill("3")
        await editor.locator('input[name="burst"]').fill("1")
        await editor.locator('input[name="burst"]').press("Enter")
        await expect(row.locator("button.rate")).to_have_text("3/s · burst 1")
        await eventually(lambda: all(w.control.rate == (3, 1) for w in run.workers))
        await screenshot(page, "cluster-rate")

        assert await page.evaluate("window.__pwned") is None
        assert await page.locator("main img, main script").count() == 0
        assert errors == []
