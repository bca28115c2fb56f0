"""Scrapy's ``FeedExporter`` extension object (``skitter.extensions.feedexport``), driven
as a program built on it drives it: built from a crawler, then ``open_spider``,
``item_scraped`` and ``close_spider``. A skitter crawl writes its FEEDS through the feed
pipeline instead (tests/pipelines); these tests are the face's own."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path
from typing import IO, Any

import pytest

from skitter import Spider, signals
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError, NotConfigured
from skitter.extensions.feedexport import (
    FeedExporter,
    FileFeedStorage,
    ItemFilter,
    apply_uri_params,
)
from skitter.utils.misc import build_from_crawler


class _Spider(Spider):
    name = "facespider"


def _exporter(feeds: dict[Any, Any], **settings: Any) -> tuple[Crawler, FeedExporter, Spider]:
    crawler = Crawler(_Spider, {"FEEDS": feeds, **settings})
    exporter = build_from_crawler(FeedExporter, crawler)
    return crawler, exporter, _Spider.from_crawler(crawler)


async def test_items_go_to_the_feed_file_and_the_slot_and_exporter_signals_are_sent(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.jl"
    crawler, exporter, spider = _exporter({out: {"format": "jsonlines"}})
    seen: list[str] = []
    crawler.signals.connect(lambda slot: seen.append(slot.uri), signal=signals.feed_slot_closed)
    crawler.signals.connect(lambda: seen.append("all"), signal=signals.feed_exporter_closed)
    exporter.open_spider(spider)
    for n in range(3):
        exporter.item_scraped({"n": n}, spider)
    assert exporter.slots[0].itemcount == 3
    await exporter.close_spider(spider)
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]
    assert seen == [str(out.absolute()), "all"]
    assert crawler.stats.get_value("feedexport/success_count/FileFeedStorage") == 1


async def test_a_full_batch_is_stored_and_the_next_starts_on_its_own_uri(tmp_path: Path) -> None:
    template = f"{tmp_path}/part-%(batch_id)02d.json"
    _crawler, exporter, spider = _exporter({template: {"format": "json", "batch_item_count": 2}})
    exporter.open_spider(spider)
    for n in range(3):
        exporter.item_scraped({"n": n}, spider)
    assert [slot.batch_id for slot in exporter.slots] == [2]
    await exporter.close_spider(spider)
    assert json.loads((tmp_path / "part-01.json").read_text()) == [{"n": 0}, {"n": 1}]
    assert json.loads((tmp_path / "part-02.json").read_text()) == [{"n": 2}]


async def test_post_processing_compresses_what_the_storage_stores(tmp_path: Path) -> None:
    out = tmp_path / "out.jl.gz"
    _crawler, exporter, spider = _exporter({out: {"format": "jl", "postprocessing": ["gzip"]}})
    exporter.open_spider(spider)
    exporter.item_scraped({"a": 1}, spider)
    await exporter.close_spider(spider)
    assert gzip.decompress(out.read_bytes()) == b'{"a": 1}\n'


async def test_item_classes_choose_the_items_of_a_feed(tmp_path: Path) -> None:
    out = tmp_path / "dicts.jl"
    _crawler, exporter, spider = _exporter({out: {"format": "jl", "item_classes": [dict]}})
    exporter.open_spider(spider)
    exporter.item_scraped({"kept": True}, spider)
    exporter.item_scraped(["not", "a", "dict"], spider)
    await exporter.close_spider(spider)
    assert out.read_text() == '{"kept": true}\n'


class _FailingStorage(FileFeedStorage):
    def store(self, file: IO[bytes]) -> None:
        file.close()
        raise OSError("disk gone")


async def test_a_failed_store_is_counted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crawler, exporter, spider = _exporter(
        {(tmp_path / "out.csv").as_uri(): {"format": "csv"}},
        FEED_STORAGES={"file": _FailingStorage},
    )
    exporter.open_spider(spider)
    exporter.item_scraped({"a": 1}, spider)
    with caplog.at_level(logging.ERROR):
        await exporter.close_spider(spider)
    assert "Error storing csv feed (1 items)" in caplog.text
    assert crawler.stats.get_value("feedexport/failed_count/_FailingStorage") == 1


async def test_an_empty_feed_is_stored_only_with_store_empty(tmp_path: Path) -> None:
    kept, skipped = tmp_path / "kept.json", tmp_path / "skipped.json"
    _crawler, exporter, spider = _exporter(
        {kept: {"format": "json"}, skipped: {"format": "json", "store_empty": False}}
    )
    exporter.open_spider(spider)
    await exporter.close_spider(spider)
    assert json.loads(kept.read_text()) == []
    assert not skipped.exists()


@pytest.mark.parametrize(
    ("feeds", "logged"),
    [
        ({"nope://x/y": {"format": "json"}}, "Unknown feed storage scheme: nope"),
        ({"out.data": {"format": "nope"}}, "Unknown feed format: nope"),
        ({"out.json": {"format": "json", "batch_item_count": 1}}, "needs %(batch_id)d"),
    ],
)
def test_what_cannot_be_exported_is_refused_with_an_error_line(
    feeds: dict[str, Any], logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR), pytest.raises(NotConfigured):
        _exporter(feeds)
    assert logged in caplog.text


def test_no_feeds_is_not_configured() -> None:
    with pytest.raises(NotConfigured):
        build_from_crawler(FeedExporter, Crawler(_Spider))


def test_uri_params_fill_placeholders_and_leave_percent_encoding_alone() -> None:
    params = {"name": "s", "batch_id": 3}
    assert apply_uri_params("ftp://u:p%23w@h/%(name)s-%(batch_id)03d", params) == (
        "ftp://u:p%23w@h/s-003"
    )
    assert apply_uri_params("/100%/%(name)s", params) == "/100%/s"


def test_item_filter_without_options_accepts_everything() -> None:
    assert ItemFilter(None).item_classes == ()
    assert ItemFilter(None).accepts(object())


def test_a_crawl_refuses_the_extension_in_extensions(tmp_path: Path) -> None:
    """A skitter crawl writes FEEDS through its feed pipeline: the extension listed in
    EXTENSIONS too would write every feed twice."""
    crawler = Crawler(
        _Spider,
        {
            "FEEDS": {tmp_path / "out.jl": {"format": "jl"}},
            "EXTENSIONS": {"skitter.extensions.feedexport.FeedExporter": 500},
        },
    )
    with pytest.raises(ConfigError, match="write every feed a second time"):
        crawler.build()


def test_a_crawl_takes_the_extension_switched_off(tmp_path: Path) -> None:
    crawler = Crawler(
        _Spider,
        {
            "FEEDS": {tmp_path / "out.jl": {"format": "jl"}},
            "EXTENSIONS": {"skitter.extensions.feedexport.FeedExporter": None},
        },
    )
    crawler.build()
    assert crawler.extensions is not None and crawler.extensions.middlewares == []


@pytest.mark.parametrize(("settings", "pool"), [({}, 10), ({"AWS_MAX_POOL_CONNECTIONS": 30}, 30)])
def test_scrapys_s3_storage_pool_is_scrapys_size_unless_the_project_sets_one(
    settings: dict[str, Any], pool: int
) -> None:
    """skitter's own default (100) is for its concurrent client; Scrapy's blocking one
    uploads from one thread at a time, with Scrapy's thread pool size."""
    pytest.importorskip("boto3")
    from skitter.extensions.feedexport import S3FeedStorage

    storage = build_from_crawler(S3FeedStorage, Crawler(_Spider, settings), "s3://b/k.csv")
    assert storage.max_pool_connections == pool
    assert storage.s3_client.meta.config.max_pool_connections == pool
