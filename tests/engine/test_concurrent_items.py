"""CONCURRENT_ITEMS (issue 27): Scrapy's setting, honoured, no longer refused. The items
of one response go through the item pipelines up to N at once when a pipeline awaits;
what the feeds see is documented: the order items get through, or with 1 the order the
callback yielded them. Errors and cancellation of one item reach the task as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import CloseSpider, Crawler, Request, Spider
from skitter.engine._items import ItemWindow
from skitter.exceptions import ConfigError, CrawlFailed, StorageError
from skitter.settings import Settings

ITEMS = 10


class Pages(Spider):
    """Two pages of ``ITEMS`` items each, yielded in order ``n`` = 0, 1, ..."""

    name = "pages"

    def start_requests(self) -> Any:
        for page in ("a", "b"):
            yield Request(f"{self.settings['BASE']}/{page}")

    def parse(self, response: Any) -> Any:
        page = response.url.rsplit("/", 1)[1]
        for n in range(ITEMS):
            yield {"page": page, "n": n}


class Slow:
    """An async pipeline: item ``n`` takes ``ITEMS - n`` turns of the event loop, so
    when items overlap the last yielded gets through first. Counts how many of one
    page are inside at once."""

    active: dict[str, int]
    peak: dict[str, int]

    def open_spider(self, spider: Any) -> None:
        self.active, self.peak = {}, {}
        Slow.last = self

    async def process_item(self, item: dict[str, Any], spider: Any) -> Any:
        page = item["page"]
        self.active[page] = self.active.get(page, 0) + 1
        self.peak[page] = max(self.peak.get(page, 0), self.active[page])
        for _ in range(ITEMS - item["n"]):
            await asyncio.sleep(0)
        self.active[page] -= 1
        return item

    last: Slow


async def run(serve: Any, tmp_path: Path, **settings: Any) -> tuple[dict[str, Any], list[Any]]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{page}", page)
    base = await serve(app)
    out = tmp_path / "items.jsonl"
    merged = {"BASE": base, "ITEM_PIPELINES": {Slow: 100}, "FEEDS": {str(out): {}}, **settings}
    stats = await Crawler(Pages, merged).run()
    return dict(stats), [json.loads(line) for line in out.read_text().splitlines()]


def by_page(items: list[dict[str, Any]], page: str) -> list[int]:
    return [item["n"] for item in items if item["page"] == page]


@pytest.mark.parametrize("limit", [3, 7])
async def test_up_to_n_items_of_a_response_are_in_the_pipelines_at_once(
    serve: Any, tmp_path: Path, limit: int
) -> None:
    stats, items = await run(serve, tmp_path, CONCURRENT_ITEMS=limit)
    assert Slow.last.peak == {"a": limit, "b": limit}
    assert stats["item_scraped_count"] == 2 * ITEMS == len(items)
    for page in ("a", "b"):
        assert sorted(by_page(items, page)) == list(range(ITEMS))


async def test_the_default_is_scrapys_and_the_feed_gets_items_as_they_get_through(
    serve: Any, tmp_path: Path
) -> None:
    """100 by default: the ten items of a page overlap; the last yielded, the quickest
    through the slow pipeline, reaches the feed first."""
    _stats, items = await run(serve, tmp_path)
    assert Settings()["CONCURRENT_ITEMS"] == 100
    assert Slow.last.peak == {"a": ITEMS, "b": ITEMS}
    for page in ("a", "b"):
        assert by_page(items, page) == list(reversed(range(ITEMS)))


async def test_one_keeps_the_order_the_callback_yields(serve: Any, tmp_path: Path) -> None:
    _stats, items = await run(serve, tmp_path, CONCURRENT_ITEMS=1)
    assert Slow.last.peak == {"a": 1, "b": 1}
    for page in ("a", "b"):
        assert by_page(items, page) == list(range(ITEMS))


@pytest.mark.parametrize("value", [0, -1])
async def test_less_than_one_is_refused_at_start(serve: Any, tmp_path: Path, value: int) -> None:
    with pytest.raises(ConfigError, match="CONCURRENT_ITEMS must be 1 or more"):
        await run(serve, tmp_path, CONCURRENT_ITEMS=value)


class Breaks(Slow):
    """Item 4 of a page cannot be stored: the crawl must fail, not finish."""

    async def process_item(self, item: dict[str, Any], spider: Any) -> Any:
        await super().process_item(item, spider)
        if item["n"] == 4:
            raise StorageError("the store refused item 4")
        return item


async def test_an_items_fatal_error_fails_the_crawl(serve: Any, tmp_path: Path) -> None:
    with pytest.raises(CrawlFailed, match="the store refused item 4") as failed:
        await run(serve, tmp_path, ITEM_PIPELINES={Breaks: 100}, CONCURRENT_ITEMS=3)
    assert failed.value.stats["finish_reason"] == "failed"
    assert all(count == 0 for count in Slow.last.active.values())  # none left running


async def test_close_spider_from_an_item_closes_the_spider(serve: Any, tmp_path: Path) -> None:
    class Closes(Slow):
        async def process_item(self, item: dict[str, Any], spider: Any) -> Any:
            await super().process_item(item, spider)
            if item["n"] == 2:
                raise CloseSpider("enough")
            return item

    stats, _ = await run(serve, tmp_path, ITEM_PIPELINES={Closes: 100}, CONCURRENT_ITEMS=4)
    assert stats["finish_reason"] == "enough"


async def test_a_cancelled_window_cancels_its_items() -> None:
    started: list[int] = []
    cancelled: list[int] = []

    async def item(n: int) -> None:
        started.append(n)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(n)
            raise

    async def callback() -> None:
        window = ItemWindow(2)
        for n in range(5):
            await window.start(item(n))
        await window.finish()

    task = asyncio.ensure_future(callback())
    for _ in range(5):
        await asyncio.sleep(0)
    assert started == [0, 1]  # the third waits for room
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == [0, 1]


async def test_a_window_raises_the_first_error_after_the_others_are_through() -> None:
    done: list[int] = []

    async def item(n: int) -> None:
        for _ in range(n):
            await asyncio.sleep(0)
        if n == 1:
            raise ValueError("item 1")
        done.append(n)

    window = ItemWindow(3)
    with pytest.raises(ValueError, match="item 1"):  # noqa: PT012 - raised by start or finish
        for n in (3, 1, 2, 4, 5):
            await window.start(item(n))
        await window.finish()
    assert sorted(done) == [2, 3]  # started before the error was seen, seen through
