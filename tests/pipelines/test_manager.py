"""ItemPipelineManager: order, sync/async, DropItem, failures, open/close isolation."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from skitter.exceptions import CloseSpider, DropItem
from skitter.pipelines import FeedExporter, ItemPipelineManager

SPIDER = object()


class Recorder:
    """Base for test pipelines: records every call in a shared list."""

    calls: list[str]

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def open_spider(self, spider: Any) -> None:
        self.calls.append(f"open {type(self).__name__}")

    def close_spider(self, spider: Any) -> None:
        self.calls.append(f"close {type(self).__name__}")


class AddA(Recorder):
    def process_item(self, item: dict[str, Any], spider: Any) -> dict[str, Any]:
        item["trail"] = [*item.get("trail", []), "A"]
        return item


class AddB(Recorder):
    async def open_spider(self, spider: Any) -> None:
        self.calls.append("open AddB")

    async def close_spider(self, spider: Any) -> None:
        self.calls.append("close AddB")

    async def process_item(self, item: dict[str, Any], spider: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        item["trail"] = [*item.get("trail", []), "B"]
        return item


class DropOdd(Recorder):
    async def process_item(self, item: dict[str, Any], spider: Any) -> dict[str, Any]:
        if item["n"] % 2:
            raise DropItem(f"odd number {item['n']}")
        return item


class Broken(Recorder):
    def process_item(self, item: dict[str, Any], spider: Any) -> dict[str, Any]:
        if item["n"] == 1:
            raise ValueError("boom")
        return item


class Stopper(Recorder):
    def process_item(self, item: dict[str, Any], spider: Any) -> dict[str, Any]:
        raise CloseSpider("enough")


class ForgetsReturn(Recorder):
    def process_item(self, item: dict[str, Any], spider: Any) -> None:
        item["seen"] = True


class CloseFails(Recorder):
    def close_spider(self, spider: Any) -> None:
        self.calls.append("close CloseFails")
        raise RuntimeError("cannot close")


class OpenFails(Recorder):
    def open_spider(self, spider: Any) -> None:
        raise ConnectionError("database is down")


def manager(stats: Any, *classes: type[Recorder], feeds: list[FeedExporter] | None = None):
    calls: list[str] = []
    pipelines = [cls(calls) for cls in classes]
    return ItemPipelineManager(pipelines, feeds=feeds or [], stats=stats), calls


async def test_items_pass_sync_and_async_pipelines_in_order(make_crawler) -> None:
    crawler = make_crawler()
    pm, calls = manager(crawler.stats, AddA, AddB, AddA)
    await pm.open_spider(SPIDER)
    out = await pm.process_item({"n": 0}, SPIDER)
    await pm.close_spider(SPIDER)
    assert out == {"n": 0, "trail": ["A", "B", "A"]}
    assert crawler.stats.get("item_scraped_count") == 1
    assert calls == [
        *("open AddA", "open AddB", "open AddA"),
        *("close AddA", "close AddB", "close AddA"),
    ]


class Plain:
    def process_item(self, item: Any, spider: Any) -> Any:
        return item


class Built:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> Built:
        return cls(crawler)

    async def process_item(self, item: Any, spider: Any) -> Any:
        return item


async def test_from_crawler_orders_by_setting_and_puts_feeds_last(make_crawler, tmp_path) -> None:
    crawler = make_crawler(
        ITEM_PIPELINES={Built: 300, f"{__name__}.Plain": 100, AddA: None},
        FEEDS={str(tmp_path / "o.jsonl"): {}},
    )
    pm = ItemPipelineManager.from_crawler(crawler)
    assert [type(p).__name__ for p in pm.pipelines] == ["Plain", "Built", "FeedExporter"]
    assert pm.pipelines[1].crawler is crawler
    await pm.open_spider(SPIDER)
    await pm.process_item({"n": 1}, SPIDER)
    await pm.close_spider(SPIDER)
    assert json.loads((tmp_path / "o.jsonl").read_text()) == {"n": 1}


async def test_drop_item_stops_the_item_counts_and_logs(make_crawler, caplog) -> None:
    crawler = make_crawler()
    pm, _ = manager(crawler.stats, DropOdd, AddA)
    await pm.open_spider(SPIDER)
    with caplog.at_level(logging.WARNING):
        assert await pm.process_item({"n": 1}, SPIDER) is None
    assert await pm.process_item({"n": 2}, SPIDER) == {"n": 2, "trail": ["A"]}
    stats = crawler.stats
    assert stats.get("item_dropped_count") == 1
    assert stats.get("item_dropped_reasons_count/DropItem") == 1
    assert stats.get("item_scraped_count") == 1
    [record] = [r for r in caplog.records if r.getMessage().startswith("Dropped:")]
    assert record.levelno == logging.WARNING
    assert "odd number 1" in record.getMessage()
    assert "'n': 1" in record.getMessage()


async def test_an_exception_in_one_pipeline_loses_that_item_only(make_crawler, caplog) -> None:
    crawler = make_crawler()
    pm, _ = manager(crawler.stats, Broken, AddA)
    await pm.open_spider(SPIDER)
    with caplog.at_level(logging.ERROR):
        assert await pm.process_item({"n": 1}, SPIDER) is None
    assert await pm.process_item({"n": 2}, SPIDER) == {"n": 2, "trail": ["A"]}
    assert crawler.stats.get("pipeline/errors/Broken") == 1
    assert crawler.stats.get("item_error_count") == 1
    assert crawler.stats.get("item_scraped_count") == 1
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "Broken" in record.getMessage()
    assert record.exc_info is not None


async def test_close_spider_from_a_pipeline_reaches_the_engine(make_crawler) -> None:
    pm, _ = manager(make_crawler().stats, Stopper)
    with pytest.raises(CloseSpider):
        await pm.process_item({"n": 1}, SPIDER)


async def test_a_forgotten_return_keeps_the_item_and_warns_once(make_crawler, caplog) -> None:
    crawler = make_crawler()
    pm, _ = manager(crawler.stats, ForgetsReturn, AddA)
    with caplog.at_level(logging.WARNING):
        first = await pm.process_item({"n": 1}, SPIDER)
        await pm.process_item({"n": 2}, SPIDER)
    assert first == {"n": 1, "seen": True, "trail": ["A"]}
    assert len([r for r in caplog.records if "returned None" in r.getMessage()]) == 1


async def test_a_failing_close_does_not_stop_the_others(make_crawler, tmp_path) -> None:
    crawler = make_crawler()
    path = tmp_path / "out.json"
    feed = _feed(path, crawler)
    pm, calls = manager(crawler.stats, CloseFails, AddA, feeds=[feed])
    await pm.open_spider(SPIDER)
    await pm.process_item({"n": 1}, SPIDER)
    # every pipeline is closed, then the failure is raised: the crawl must not pass
    with pytest.raises(RuntimeError, match="cannot close") as raised:
        await pm.close_spider(SPIDER)
    assert "while closing item pipeline CloseFails" in raised.value.__notes__
    assert calls[-2:] == ["close CloseFails", "close AddA"]
    assert crawler.stats.get("pipeline/errors/CloseFails") == 1
    assert json.loads(path.read_bytes()) == [{"n": 1, "trail": ["A"]}]
    await pm.close_spider(SPIDER)  # a second close does nothing
    assert calls.count("close AddA") == 1


async def test_a_failing_open_closes_those_opened_and_names_the_pipeline(make_crawler) -> None:
    pm, calls = manager(make_crawler().stats, AddA, OpenFails, AddB)
    with pytest.raises(ConnectionError) as info:
        await pm.open_spider(SPIDER)
    assert "OpenFails" in "".join(info.value.__notes__)
    assert calls == ["open AddA", "close AddA"]


class SlowClose(Recorder):
    started: asyncio.Event

    async def close_spider(self, spider: Any) -> None:
        self.started.set()
        await asyncio.Event().wait()  # never finishes: only cancellation ends it


async def test_feeds_are_finalized_when_closing_is_cancelled(make_crawler, tmp_path) -> None:
    crawler = make_crawler()
    path = tmp_path / "out.json"
    pm, _ = manager(crawler.stats, SlowClose, feeds=[_feed(path, crawler)])
    slow = pm.pipelines[0]
    slow.started = asyncio.Event()
    await pm.open_spider(SPIDER)
    await pm.process_item({"n": 1}, SPIDER)
    task = asyncio.create_task(pm.close_spider(SPIDER))
    await slow.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert json.loads(path.read_bytes()) == [{"n": 1}]


async def test_feeds_see_only_items_that_survived_every_pipeline(make_crawler, tmp_path) -> None:
    crawler = make_crawler()
    path = tmp_path / "out.jsonl"
    pm, _ = manager(crawler.stats, DropOdd, feeds=[_feed(path, crawler)])
    await pm.open_spider(SPIDER)
    for n in range(5):
        await pm.process_item({"n": n}, SPIDER)
    await pm.close_spider(SPIDER)
    assert [json.loads(line)["n"] for line in path.read_text().splitlines()] == [0, 2, 4]


def _feed(path: Any, crawler: Any) -> FeedExporter:
    from skitter.pipelines import parse_feeds

    [options] = parse_feeds({str(path): {"overwrite": True}})
    return FeedExporter(options, stats=crawler.stats, clock=crawler.clock)
