"""A store that refuses a write stops the crawl with a clear reason and leaves the task
at hand unacknowledged: a feed on a full disk (with or without the workers' flush before
each ack), the job database full mid-run or at its last write. Real crawls against a
local server; the full disk is ``FullDisk``, the full database SQLite's own SQLITE_FULL
(``PRAGMA max_page_count``)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import ConfigError, CrawlFailed
from skitter.frontier import MemoryFrontier, SqliteFrontier, TaskState
from skitter.testing import FullDisk

ENOSPC = "cannot write: [Errno 28] No space left on device"
FULL_DB = "cannot write: database or disk is full"


def site(
    pages: int, on_hit: Callable[[int], None] | None = None
) -> tuple[web.Application, list[int]]:
    """Page n links to 2n+1 and 2n+2, up to ``pages``; logs what it served, and calls
    ``on_hit`` with the count so far."""
    hits: list[int] = []

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        hits.append(n)
        if on_hit is not None:
            on_hit(len(hits))
        links = "".join(f'<a href="/p/{m}">{m}</a>' for m in (2 * n + 1, 2 * n + 2) if m < pages)
        return web.Response(text=f"<html>{links}</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app, hits


class Tree(Spider):
    name = "tree"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response: Response) -> Any:
        yield {"n": int(response.url.rsplit("/", 1)[1]), "pad": "x" * 100}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


def lines(path: Path) -> list[int]:
    return [json.loads(line)["n"] for line in path.read_text().splitlines()]


class OnMemory(Crawler):
    """A crawler whose frontier the test keeps, to look at the tasks afterwards."""

    frontier: MemoryFrontier
    flush_before_ack = False

    def build(self, mode: str = "crawl") -> Any:
        project = super().build(mode)
        self.frontier = project.scheduler.frontier = MemoryFrontier()
        project.flush_feeds_before_ack = self.flush_before_ack
        return project


async def states(frontier: Any, pages: list[int], base: str) -> dict[TaskState, list[int]]:
    by: dict[TaskState, list[int]] = {}
    for n in pages:
        info = await frontier.task(Request(f"{base}/p/{n}").taskid)
        if info is not None:
            by.setdefault(info.state, []).append(n)
    return by


async def test_a_feed_on_a_full_disk_fails_the_crawl_and_counts_only_what_it_holds(
    serve: Any, tmp_path: Path
) -> None:
    app, hits = site(200)
    base = await serve(app)
    out = tmp_path / "out.jsonl"
    crawler = OnMemory(
        Tree,
        {"BASE": base, "FEEDS": {str(out): {}}, "CONCURRENT_REQUESTS": 1, "RETRY_ENABLED": False},
    )
    with FullDisk(4000, buffer_size=1000).feeds(), pytest.raises(CrawlFailed) as raised:
        await crawler.run()
    assert re.search(f"feed '{re.escape(str(out))}': {re.escape(ENOSPC)}", raised.value.reason)
    stats = raised.value.stats
    assert stats["finish_reason"] == "failed"
    written = lines(out)  # cut back to the last flush that succeeded: whole lines only
    assert stats["item_scraped_count"] == len(written)
    assert stats["feedexport/item_count/jsonl"] == len(written)
    lost = stats["feedexport/lost_items"]
    assert lost > 0
    assert stats["engine/tasks_left_unsettled"] == 1
    assert "item_error_count" not in stats  # not taken for a bad item
    assert len(hits) < 200  # it stopped
    by_state = await states(crawler.frontier, hits, base)
    # One page at a time: the pages whose items are in the file, then those whose items
    # were in the lost buffer (acknowledged before the write failed: gone for good
    # without a job directory, and counted as lost), then the one at hand, not acked.
    assert by_state[TaskState.SUCCESS] == hits[: len(written) + lost]
    assert by_state[TaskState.ACTIVE] == hits[len(written) + lost :]
    assert len(by_state[TaskState.ACTIVE]) == 1
    assert written == hits[: len(written)]


async def test_a_failed_flush_before_an_ack_leaves_the_task_unacked(
    serve: Any, tmp_path: Path
) -> None:
    """Workers flush the feeds before each ack (a shared frontier acks at once)."""
    app, hits = site(200)
    base = await serve(app)
    out = tmp_path / "out.jsonl"
    crawler = OnMemory(
        Tree,
        {"BASE": base, "FEEDS": {str(out): {}}, "CONCURRENT_REQUESTS": 1, "RETRY_ENABLED": False},
    )
    crawler.flush_before_ack = True
    with FullDisk(1500).feeds(), pytest.raises(CrawlFailed, match=re.escape(ENOSPC)) as raised:
        await crawler.run()
    stats = raised.value.stats
    written = lines(out)
    assert stats["item_scraped_count"] == len(written)
    assert stats["feedexport/lost_items"] == 1  # only the item of the task at hand
    by_state = await states(crawler.frontier, hits, base)
    assert by_state[TaskState.SUCCESS] == written  # every acked task's item is in the file
    assert by_state[TaskState.ACTIVE] == hits[len(written) :]
    assert len(by_state[TaskState.ACTIVE]) == 1
    assert TaskState.FAILED not in by_state  # not taken for a failed download


class Fills(Crawler):
    """Can make its job database full: a real SQLITE_FULL at the next write that needs a
    page more."""

    def build(self, mode: str = "crawl") -> Any:
        project = super().build(mode)
        self.db = project.scheduler.frontier
        assert isinstance(self.db, SqliteFrontier)
        return project

    def flush_now(self) -> None:
        self.db._writer.flush()

    def fill(self) -> None:
        connection: sqlite3.Connection = self.db._db
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")


async def test_a_job_database_full_mid_run_stops_the_crawl(serve: Any, tmp_path: Path) -> None:
    pages = 400

    def fill_at_20(count: int) -> None:
        if count == 20:
            crawler.fill()

    app, hits = site(pages, fill_at_20)
    base = await serve(app)
    settings = {"BASE": base, "FEEDS": {str(tmp_path / "out.jsonl"): {}}}
    crawler = Fills(Tree, settings, job_dir=tmp_path / "job")
    with pytest.raises(CrawlFailed) as raised:
        await crawler.run()
    assert f"job database {tmp_path / 'job' / 'job.sqlite3'}: {FULL_DB}" in raised.value.reason
    assert raised.value.stats["finish_reason"] == "failed"
    assert crawler.control.status == "failed"
    assert len(hits) < pages  # stopped, instead of crawling on without recording
    # Room again: the resume finds the state of the last good write and finishes the job.
    stats = await Crawler(Tree, settings, job_dir=tmp_path / "job").run()
    assert stats["finish_reason"] == "finished"
    assert sorted(set(lines(tmp_path / "out.jsonl"))) == list(range(pages))


async def test_a_job_database_that_cannot_take_the_last_write_fails_the_crawl(
    serve: Any, tmp_path: Path
) -> None:
    app, _hits = site(30)
    base = await serve(app)

    class FillsAtTheEnd(Tree):
        def closed(self, reason: str) -> None:
            crawler.flush_now()  # as the write behind may have done: nothing left but
            self.state["big"] = "x" * 200_000  # the last checkpoint, which needs more pages
            crawler.fill()

    crawler = Fills(FillsAtTheEnd, {"BASE": base}, job_dir=tmp_path / "job")
    with pytest.raises(CrawlFailed) as raised:
        await crawler.run()
    assert f"job database {tmp_path / 'job' / 'job.sqlite3'}: {FULL_DB}" in raised.value.reason
    assert raised.value.stats["finish_reason"] == "failed"


async def test_the_spiders_state_set_in_closed_is_kept_when_every_task_was_written(
    serve: Any, tmp_path: Path
) -> None:
    """The last write used to be skipped when no task was left to write (the write
    behind had just run): what ``closed()`` put in the state, and the final stats, were
    lost, depending on which came first."""
    app, _hits = site(10)
    base = await serve(app)

    class Counts(Tree):
        def closed(self, reason: str) -> None:
            crawler.flush_now()  # every task written: nothing left for the last write
            self.state["closed"] = reason

    crawler = Fills(Counts, {"BASE": base}, job_dir=tmp_path / "job")
    stats = await crawler.run()
    with sqlite3.connect(tmp_path / "job" / "job.sqlite3") as db:
        rows = dict(db.execute("SELECT key, value FROM meta").fetchall())
    assert json.loads(rows["spider_state"]) == {"closed": "finished"}
    assert json.loads(rows["stats"])["item_scraped_count"] == stats["item_scraped_count"] == 10


async def test_a_feed_that_cannot_be_opened_fails_before_anything_is_fetched(
    serve: Any, tmp_path: Path
) -> None:
    app, hits = site(10)
    base = await serve(app)
    blocker = tmp_path / "file"
    blocker.write_text("")  # a file where the feed wants a directory
    crawler = Crawler(Tree, {"BASE": base, "FEEDS": {str(blocker / "out.jsonl"): {}}})
    with pytest.raises(ConfigError, match="cannot open feed"):
        await crawler.run()
    assert hits == []
    assert crawler.stats.get("finish_reason") == "failed"  # not "finished"
    assert crawler.control.status == "failed"
