"""Scrapy's ``Crawler.get_extension()`` and friends, and its crawl-once rule."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from skitter.crawler import Crawler
from skitter.spider import Spider


class Tracking:
    """A component of every kind: an extension, a middleware, a pipeline."""

    def process_item(self, item: Any, spider: Any) -> Any:
        return item


class Child(Tracking):
    pass


class Looking(Spider):
    name = "looking"
    found: ClassVar[dict[str, Any]] = {}

    async def start(self):  # type: ignore[override]
        crawler = self.crawler
        for kind in ("extension", "downloader_middleware", "spider_middleware", "item_pipeline"):
            getter = getattr(crawler, f"get_{kind}")
            Looking.found[kind] = (getter(Tracking), getter(Child), getter(Looking))
        return
        yield


async def test_the_running_instance_of_a_class_or_subclass_is_found() -> None:
    settings = {
        "EXTENSIONS": {Tracking: 0},
        "DOWNLOADER_MIDDLEWARES": {Tracking: 0},
        "SPIDER_MIDDLEWARES": {Tracking: 0},
        "ITEM_PIPELINES": {Tracking: 0},
    }
    await Crawler(Looking, settings).crawl_async()
    for kind, (mine, child, other) in Looking.found.items():
        assert isinstance(mine, Tracking), kind
        assert child is None and other is None, kind


def test_before_the_crawl_the_components_are_refused() -> None:
    crawler = Crawler(Looking)
    with pytest.raises(RuntimeError, match="get_extension"):
        crawler.get_extension(Tracking)
    assert crawler.get_addon(Tracking) is None


class Empty(Spider):
    name = "empty"

    async def start(self):  # type: ignore[override]
        return
        yield


async def test_a_crawler_crawls_once() -> None:
    crawler = Crawler(Empty)
    await crawler.crawl_async()
    assert not crawler.crawling
    with pytest.raises(RuntimeError, match="more than once"):
        await crawler.crawl_async()


class Positional(Spider):
    name = "positional"

    def __init__(self, url: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.url = url

    async def start(self):  # type: ignore[override]
        return
        yield


async def test_crawl_async_passes_positional_arguments_to_the_spider() -> None:
    crawler = Crawler(Positional)
    await crawler.crawl_async("http://127.0.0.1:9/", tag="x")
    assert crawler.spider.url == "http://127.0.0.1:9/"
    assert crawler.spider.tag == "x"
