"""A crawl that did not do what was asked fails loudly: ``finish_reason`` "failed", a
``finish_error`` saying why, ``CrawlFailed`` from ``Crawler.run()`` and a non-zero exit
from the command line. Each test makes one way of failing happen against a real server."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider, run_crawlers
from skitter.exceptions import CrawlFailed, FrontierUnavailable, StorageError
from skitter.frontier import MemoryFrontier, TaskState

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4}


def site() -> tuple[web.Application, list[str]]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text=f"<p>{request.path}</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app, hits


async def test_start_requests_that_break_off_fail_the_crawl_after_crawling_what_was_queued(
    serve: Any,
) -> None:
    app, hits = site()
    base = await serve(app)

    class Breaks(Spider):
        name = "breaks"

        def start_requests(self) -> Any:
            yield Request(f"{base}/1")
            yield Request(f"{base}/2")
            raise OSError("the URL list is unreadable")

        def parse(self, response: Response) -> Any:
            yield {"path": response.url}

    crawler = Crawler(Breaks, FAST)
    with pytest.raises(CrawlFailed, match="start requests raised OSError after 2") as raised:
        await crawler.run()
    assert sorted(hits) == ["/1", "/2"]  # what was queued is still crawled
    stats = raised.value.stats
    assert stats["finish_reason"] == "failed"
    assert "the URL list is unreadable" in stats["finish_error"]
    assert stats["item_scraped_count"] == 2
    assert crawler.control.status == "failed"
    assert crawler.failure is not None


class FullDisk:
    """A pipeline whose store refuses writes after two items, as a full disk would."""

    def __init__(self) -> None:
        self.stored: list[Any] = []

    def process_item(self, item: Any, spider: Any) -> Any:
        if len(self.stored) == 2:
            raise StorageError("No space left on device")
        self.stored.append(item)
        return item


async def test_a_storage_error_stops_the_crawl_and_leaves_its_task_unacked(serve: Any) -> None:
    app, hits = site()
    base = await serve(app)
    frontier = MemoryFrontier()

    class Many(Spider):
        name = "many"
        start_urls = [f"{base}/{n}" for n in range(20)]
        custom_settings = {"CONCURRENT_REQUESTS": 1}

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    class Own(Crawler):
        def build(self, mode: str = "crawl") -> Any:
            project = super().build(mode)
            project.scheduler.frontier = frontier
            return project

    pipeline = FullDisk()
    with pytest.raises(CrawlFailed, match="No space left on device") as raised:
        await Own(Many, {**FAST, "ITEM_PIPELINES": {pipeline: 100}}).run()
    stats = raised.value.stats
    assert stats["finish_reason"] == "failed"
    assert stats["item_scraped_count"] == 2
    assert stats["engine/tasks_left_unsettled"] == 1
    assert len(hits) < 20  # it stopped instead of going on without storing
    states = [
        await frontier.task(f"{Request(url).fingerprint.hex()}-s{n}")
        for n, url in enumerate(Many.start_urls[:3])
    ]
    assert [info.state for info in states if info is not None] == [
        TaskState.SUCCESS,
        TaskState.SUCCESS,
        TaskState.ACTIVE,  # the third: neither acked nor failed
    ]


async def test_a_pipeline_that_cannot_close_fails_the_crawl(serve: Any) -> None:
    app, _hits = site()
    base = await serve(app)

    class Uploader:
        def process_item(self, item: Any, spider: Any) -> Any:
            return item

        async def close_spider(self, spider: Any) -> None:
            raise ConnectionError("upload refused")

    class One(Spider):
        name = "one"
        start_urls = [f"{base}/"]

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    with pytest.raises(CrawlFailed, match="closing pipelines: ConnectionError: upload refused"):
        await Crawler(One, {**FAST, "ITEM_PIPELINES": {Uploader: 100}}).run()


class Unreachable(MemoryFrontier):
    """A store that is out of reach for good once the crawl has started."""

    async def lease(self, *args: Any, **kwargs: Any) -> Any:
        raise FrontierUnavailable("connection refused")


async def test_an_outage_longer_than_the_timeout_fails_the_crawl(serve: Any) -> None:
    app, hits = site()
    base = await serve(app)

    class Waits(Spider):
        name = "waits"
        start_urls = [f"{base}/"]

    class Own(Crawler):
        def build(self, mode: str = "crawl") -> Any:
            project = super().build(mode)
            project.scheduler.frontier = Unreachable()
            return project

    crawler = Own(Waits, {**FAST, "FRONTIER_OUTAGE_TIMEOUT": 1.0})
    with pytest.raises(
        CrawlFailed, match=r"unavailable for \d+ s \(FRONTIER_OUTAGE_TIMEOUT is 1 s\)"
    ):
        await asyncio.wait_for(crawler.run(), 20)
    assert hits == []


async def test_run_crawlers_raises_after_every_crawler_ended(serve: Any) -> None:
    app, hits = site()
    base = await serve(app)

    class Good(Spider):
        name = "good"
        start_urls = [f"{base}/good"]

        def parse(self, response: Response) -> None:
            return None

    class Bad(Spider):
        name = "bad"

        def start_requests(self) -> Sequence[Request]:
            raise ValueError("no start")

    good, bad = Crawler(Good, FAST), Crawler(Bad, FAST)
    with pytest.raises(CrawlFailed) as raised:
        await run_crawlers([good, bad])
    assert raised.value.failures == [
        ("bad", "start requests raised ValueError after 0 of them: no start")
    ]
    assert hits == ["/good"]
    assert good.failure is None and good.stats.get("finish_reason") == "finished"
    # without raising, each crawler says how it ended
    good, bad = Crawler(Good, FAST), Crawler(Bad, FAST)
    results = await run_crawlers([good, bad], raise_on_failure=False)
    assert [r["finish_reason"] for r in results] == ["finished", "failed"]


async def test_the_command_exits_non_zero_with_the_reason(serve: Any, tmp_path: Path) -> None:
    app, _hits = site()
    base = await serve(app)
    spider = tmp_path / "spider.py"
    spider.write_text(
        textwrap.dedent(
            f"""
            from skitter import Request, Spider

            class Breaks(Spider):
                name = "breaks"

                def start_requests(self):
                    yield Request("{base}/1")
                    raise RuntimeError("broken source")

                def parse(self, response):
                    yield {{"url": response.url}}
            """
        )
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "crawl",
        str(spider),
        "--no-progress",
        "-o",
        str(tmp_path / "out.jsonl"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    text = out.decode()
    assert proc.returncode == 1, text
    assert "crawl of spider 'breaks' failed: start requests raised RuntimeError" in text
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 1
