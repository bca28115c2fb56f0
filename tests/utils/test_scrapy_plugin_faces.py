"""Scrapy names plug-ins import besides the spider API: ``scrapy.statscollectors``,
``scrapy.utils.conf.build_component_list``, the ``*_BASE`` component tables read as
settings, and a ``ResponseTypes`` subclass's ``CLASSES`` (scrapy-poet and scrapy-splash
use each of them)."""

from __future__ import annotations

from typing import Any

import pytest

from skitter import Crawler, Spider
from skitter.exceptions import ConfigError, ScrapyDeprecationWarning
from skitter.http import Headers, HtmlResponse, JsonResponse, Response, TextResponse
from skitter.responsetypes import ResponseTypes, responsetypes
from skitter.settings import Settings
from skitter.statscollectors import DummyStatsCollector, MemoryStatsCollector, StatsCollector
from skitter.utils.conf import build_component_list


class Named(Spider):
    name = "named"


def _crawler(**settings: Any) -> Crawler:
    return Crawler(Named, {"LOG_LEVEL": "WARNING", **settings})


def test_stats_collector_keeps_scrapys_values() -> None:
    stats = StatsCollector(_crawler())
    assert stats.get_stats() == {} and stats.get_value("x", "d") == "d"
    stats.set_value("n", 23)
    stats.inc_value("n")
    stats.inc_value("m", 2, start=10)
    stats.max_value("n", 6)
    stats.min_value("low", 7)
    stats.min_value("low", 9)
    assert stats.get_stats() == {"n": 24, "m": 12, "low": 7}
    stats.set_stats({"replaced": 1})
    assert stats.get_stats() == {"replaced": 1}
    stats.clear_stats()
    assert stats.get_stats() == {}
    with pytest.warns(ScrapyDeprecationWarning, match=r"StatsCollector\.set_value\(\)"):
        stats.set_value("k", 1, spider=object())


def test_memory_collector_keeps_the_closed_spiders_stats_and_dummy_keeps_none() -> None:
    crawler = _crawler(STATS_DUMP=False)
    crawler.spider = Named()
    memory = MemoryStatsCollector(crawler)
    memory.inc_value("pages")
    memory.close_spider(reason="finished")
    assert memory.spider_stats == {"named": {"pages": 1}}
    dummy = DummyStatsCollector(crawler)
    dummy.inc_value("pages")
    dummy.set_value("k", 1)
    assert dummy.get_stats() == {} and dummy.get_value("k", 0) == 0


def test_a_crawls_own_stats_count_as_a_stats_collector() -> None:
    # scrapy-poet injects crawler.stats where a page object asks for a StatsCollector
    assert isinstance(_crawler().stats, StatsCollector)
    assert not isinstance({}, StatsCollector)


def test_build_component_list_orders_and_drops_the_switched_off() -> None:
    assert build_component_list({"b": 2, "a": 1, "off": None, "c": 1.5}) == ["a", "c", "b"]
    with pytest.raises(ValueError, match="Invalid value '2' for component 'b'"):
        build_component_list({"b": "2"})


def test_base_tables_read_as_scrapys_base_settings_and_stay_refused() -> None:
    settings = Settings()
    base = settings["DOWNLOADER_MIDDLEWARES_BASE"]
    assert base["skitter.downloader.RetryMiddleware"] == 550
    base.clear()  # a copy: the built-ins are not changed through it
    assert settings["DOWNLOADER_MIDDLEWARES_BASE"]
    assert any(path.endswith("DepthMiddleware") for path in settings["SPIDER_MIDDLEWARES_BASE"])
    with pytest.raises(ConfigError, match="DOWNLOADER_MIDDLEWARES_BASE"):
        _crawler(DOWNLOADER_MIDDLEWARES_BASE={})


class Wrapped(TextResponse):
    pass


class WrappedJson(Wrapped):
    pass


class OwnTypes(ResponseTypes):
    """As scrapy-splash's: its own classes by MIME type, ``text/*`` for the rest."""

    CLASSES = {
        "text/html": f"{__name__}.Wrapped",
        "application/json": WrappedJson,
        "text/*": Wrapped,
    }


def test_a_subclass_classes_table_chooses_the_class() -> None:
    own = OwnTypes()
    html = Headers({"Content-Type": "text/html; charset=utf-8"})
    assert own.from_args(headers=html) is Wrapped
    assert own.from_args(headers=Headers({"Content-Type": "application/json"})) is WrappedJson
    assert own.from_mimetype("text/csv") is Wrapped  # by its base type
    assert own.from_mimetype("image/png") is Response
    assert own.from_args(url="http://x/a.html") is Wrapped
    assert own.from_args(body=b"<html><p>hi</p></html>") is Wrapped
    # skitter's own table is untouched
    assert responsetypes.from_args(headers=html) is HtmlResponse
    assert responsetypes.from_mimetype("application/json") is JsonResponse


def test_core_stats_counts_into_a_collector_of_ones_own_never_into_the_crawls() -> None:
    from skitter.extensions.corestats import CoreStats
    from skitter.signals import item_scraped

    crawler = _crawler()
    own = CoreStats.from_crawler(crawler)
    assert own.stats is crawler.stats
    assert item_scraped not in crawler.signals.live, "the crawl counts its items itself"
    crawler.stats = collector = StatsCollector(crawler)  # type: ignore[assignment]
    core = CoreStats.from_crawler(crawler)
    assert item_scraped in crawler.signals.live
    core.spider_opened(None)
    core.item_scraped({}, None)
    core.response_received(None)
    core.item_dropped({}, None, ZeroDivisionError())
    core.spider_closed(None, "finished")
    counts = collector.get_stats()
    assert counts["item_scraped_count"] == counts["response_received_count"] == 1
    assert counts["item_dropped_reasons_count/ZeroDivisionError"] == 1
    assert counts["finish_reason"] == "finished" and counts["elapsed_time_seconds"] >= 0


def test_a_filesystem_cache_subclass_decides_where_entries_live(tmp_path: Any) -> None:
    # scrapy-splash's SplashAwareFSCacheStorage keys entries by the Splash arguments too
    from skitter.extensions.httpcache import FilesystemCacheStorage
    from skitter.http import Request

    class ByTag(FilesystemCacheStorage):
        def _get_request_path(self, spider: Any, request: Request) -> str:
            return str(tmp_path / "entries" / request.meta["tag"])

    storage = ByTag(Settings({"HTTPCACHE_DIR": str(tmp_path / "cache")}))
    spider = Named()
    first = Request("http://site/p", meta={"tag": "one"})
    storage.store_response(spider, first, HtmlResponse("http://site/p", body=b"<p>1</p>"))
    assert (tmp_path / "entries" / "one").is_file()
    assert storage.retrieve_response(spider, first) is not None
    other = Request("http://site/p", meta={"tag": "two"})  # same URL, another entry
    assert storage.retrieve_response(spider, other) is None


def test_default_settings_reads_a_base_table_of_built_ins_as_the_table() -> None:
    """Scrapy code iterates ``default_settings.SPIDER_MIDDLEWARES_BASE``; its default
    (None: the built-ins) reads as their table there too."""
    from skitter.settings import default_settings

    table = default_settings.SPIDER_MIDDLEWARES_BASE
    assert any(path.endswith("DepthMiddleware") for path in table)
    table.clear()  # a copy
    assert default_settings.SPIDER_MIDDLEWARES_BASE
