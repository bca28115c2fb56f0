"""A task store that takes no writes for a while (Redis out of memory, read-only, or
refusing writes it cannot persist) while it still hands out leases: no task is failed,
acked or lost because what it yielded could not be queued; dispatch pauses; and the
crawl fails once it has lasted FRONTIER_OUTAGE_TIMEOUT, rather than re-downloading the
same pages for ever. Against a real site, with a memory frontier that refuses pushes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import CrawlFailed, FrontierUnavailable, IgnoreRequest
from skitter.frontier import MemoryFrontier, PushOutcome, TaskState

#: Short leases, so that a task left to its lease runs again within the test.
FAST = {"RETRY_TIMES": 0, "CONCURRENT_REQUESTS": 2, "PROCESSING_TIMEOUT": 0.5}


class Full(MemoryFrontier):
    """Takes the start request, then refuses every push while ``full`` (as Redis out of
    memory does), counting the refusals; leases, acks and nacks still work."""

    def __init__(self, refusals: int | None = None) -> None:
        super().__init__()
        self.full = False
        self.refused = 0
        self._refusals = refusals  # None: for ever

    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        if self.full and (self._refusals is None or self.refused < self._refusals):
            self.refused += 1
            raise FrontierUnavailable("Redis for test is out of memory (OOM)")
        self.full = True
        return await super().push(requests, now, force=force)


def tree() -> tuple[web.Application, list[str]]:
    hits: list[str] = []

    async def page(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="<a href='/child'>child</a>", content_type="text/html")

    async def broken(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise ConnectionResetError  # the download fails: a RequestError

    app = web.Application()
    app.router.add_get("/broken", broken)
    app.router.add_get("/{tail:.*}", page)
    return app, hits


def crawler_on(frontier: MemoryFrontier, spider: type[Spider], **settings: Any) -> Crawler:
    class Own(Crawler):
        def build(self, mode: str = "crawl") -> Any:
            project = super().build(mode)
            project.scheduler.frontier = frontier
            return project

    return Own(spider, {**FAST, **settings})


async def test_children_that_cannot_be_queued_fail_the_crawl_after_the_timeout(
    serve: Any,
) -> None:
    app, hits = tree()
    base = await serve(app)

    class Parent(Spider):
        name = "parent"
        start_urls = [f"{base}/"]

        def parse(self, response: Response) -> Any:
            yield response.follow("/child")

    frontier = Full()
    crawler = crawler_on(frontier, Parent, FRONTIER_OUTAGE_TIMEOUT=1.5)
    with pytest.raises(CrawlFailed, match=r"unavailable for \d+ s .* out of memory") as raised:
        await asyncio.wait_for(crawler.run(), 30)
    stats = raised.value.stats
    assert stats["engine/tasks_left_to_lease_expiry"] >= 1
    assert "/child" not in hits
    parent = await frontier.task(f"{Request(f'{base}/').fingerprint.hex()}-s0")
    assert parent is not None and parent.state is TaskState.ACTIVE  # neither acked nor failed


async def test_once_the_store_takes_writes_again_the_parent_runs_again_and_finishes(
    serve: Any,
) -> None:
    app, hits = tree()
    base = await serve(app)

    class Parent(Spider):
        name = "parent"
        start_urls = [f"{base}/"]

        def parse(self, response: Response) -> Any:
            if response.url.endswith("/"):
                yield response.follow("/child")
            yield {"url": response.url}

    frontier = Full(refusals=2)
    stats = await asyncio.wait_for(crawler_on(frontier, Parent).run(), 30)
    assert frontier.refused == 2
    assert hits.count("/") == 3  # twice its children could not be queued: it ran again
    assert hits.count("/child") == 1
    assert stats["engine/tasks_left_to_lease_expiry"] == 2
    assert stats.get("engine/frontier_unavailable", 0) >= 2  # dispatch paused each time
    # the parent's item each time it ran (written before its ack, as always), the child's
    assert stats["item_scraped_count"] == 3 + 1
    assert await frontier.tasks(TaskState.FAILED) == []


@pytest.mark.parametrize(
    ("path", "meta", "state"),
    [
        ("/broken", {}, TaskState.FAILED),  # out of retries on a status
        ("/big", {"download_maxsize": 1}, TaskState.FAILED),  # a RequestError
        ("/ignored", {"ignore": True}, TaskState.BAD),  # IgnoreRequest
    ],
)
async def test_what_an_errback_yields_is_not_lost_with_its_failed_task(
    serve: Any, path: str, meta: dict[str, Any], state: TaskState
) -> None:
    app, hits = tree()
    base = await serve(app)

    class Ignore:
        def process_request(self, request: Request, spider: Any) -> None:
            if request.meta.get("ignore"):
                hits.append(request.url.removeprefix(base))
                raise IgnoreRequest("not wanted")

    class Fallback(Spider):
        name = "fallback"
        custom_settings = {"DOWNLOADER_MIDDLEWARES": {Ignore: 1}}

        def start_requests(self) -> Any:
            yield Request(f"{base}{path}", meta=meta, errback=self.fall_back)

        def fall_back(self, failure: Exception) -> Any:
            yield Request(f"{base}/fallback")

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    frontier = Full(refusals=1)
    stats = await asyncio.wait_for(crawler_on(frontier, Fallback).run(), 30)
    # The first time its errback's request could not be queued: the task was left to
    # its lease instead of being FAILED with that request lost; the second time it was.
    assert hits.count(path) == 2
    assert hits.count("/fallback") == 1
    assert stats["item_scraped_count"] == 1
    (failed,) = await frontier.tasks(state)
    assert failed.url == f"{base}{path}"
