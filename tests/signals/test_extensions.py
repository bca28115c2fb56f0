"""EXTENSIONS, and how every component is built (from_crawler, from_settings, no
argument, NotConfigured), in real crawls of a site answered in memory (``MockTransport``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from skitter import ConfigError, Crawler, Request, Response, Spider, signals
from skitter.exceptions import NotConfigured
from skitter.testing import MockTransport

BASE = "http://site.test"
FAST = {
    "RETRY_DELAYS": [0.0],
    "CONCURRENT_REQUESTS": 4,
    "DOWNLOAD_TRANSPORT": MockTransport(lambda request: "<p>1</p><p>2</p>"),
}
BUILT: list[str] = []


class ItemCounter:
    """The extension of Scrapy's documentation: counts items, logs at the end."""

    def __init__(self, every: int, stats: Any) -> None:
        self.every = every
        self.stats = stats
        BUILT.append("ItemCounter")

    @classmethod
    def from_crawler(cls, crawler: Any) -> ItemCounter:
        if not crawler.settings.getbool("MYEXT_ENABLED"):
            raise NotConfigured
        ext = cls(crawler.settings.getint("MYEXT_ITEMCOUNT", 1000), crawler.stats)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Spider) -> None:
        self.stats.set_value("myext/opened", spider.name)

    def item_scraped(self, item: Any, spider: Spider) -> None:
        self.stats.inc_value("myext/items")
        if self.stats.get_value("myext/items") % self.every == 0:
            self.stats.inc_value("myext/milestones")

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.stats.set_value("myext/closed", reason)


class FromSettings:
    def __init__(self, value: str) -> None:
        self.value = value
        BUILT.append(f"FromSettings {value}")

    @classmethod
    def from_settings(cls, settings: Any) -> FromSettings:
        return cls(settings.get("MYEXT_VALUE", "none"))


class Plain:
    def __init__(self) -> None:
        BUILT.append("Plain")


class Off:
    def __init__(self) -> None:
        BUILT.append("Off")


class Refuses:
    def __init__(self) -> None:
        raise NotConfigured("no API key")


class Pages(Spider):
    name = "pages"

    def parse(self, response: Response) -> Any:
        for n in response.css("p::text").getall():
            yield {"n": int(n)}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    BUILT.clear()


async def test_extensions_are_built_in_order_and_act_on_signals(
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = BASE
    crawler = Crawler(
        Pages,
        {
            **FAST,
            "EXTENSIONS": {
                f"{__name__}.ItemCounter": 300,
                FromSettings: 200,
                Plain: 100,
                Off: None,
                Refuses: 50,
                "nowhere.telnet.TelnetConsole": None,  # switching off what does not exist
            },
            "MYEXT_ENABLED": "True",
            "MYEXT_ITEMCOUNT": "2",
            "MYEXT_VALUE": "set",
        },
        start_urls=[base + "/1", base + "/2"],
    )
    with caplog.at_level(logging.DEBUG, logger="skitter.components"):
        stats = await crawler.run()
    assert "nowhere.telnet.TelnetConsole is switched off, but there is no such" in caplog.text
    assert BUILT == ["Plain", "FromSettings set", "ItemCounter"]
    assert crawler.extensions is not None
    assert [type(e).__name__ for e in crawler.extensions.middlewares] == [
        "Plain",
        "FromSettings",
        "ItemCounter",
    ]
    assert stats["myext/opened"] == "pages"
    assert stats["myext/items"] == 4
    assert stats["myext/milestones"] == 2
    assert stats["myext/closed"] == "finished"
    assert "NotConfigured" in caplog.text and "no API key" in caplog.text


async def test_an_extension_that_is_not_configured_is_left_out() -> None:
    base = BASE
    crawler = Crawler(Pages, {**FAST, "EXTENSIONS": {ItemCounter: 1}}, start_urls=[base + "/"])
    stats = await crawler.run()
    assert BUILT == []
    assert "myext/items" not in stats


def test_an_extension_that_cannot_be_imported_is_refused() -> None:
    crawler = Crawler(Pages, {"EXTENSIONS": {"nowhere.Ext": 1}})
    with pytest.raises(ConfigError, match="nowhere"):
        crawler.build()


def test_from_crawler_returning_none_is_refused() -> None:
    class Broken:
        @classmethod
        def from_crawler(cls, crawler: Any) -> None:
            return None

    with pytest.raises(ConfigError, match="from_crawler returned None"):
        Crawler(Pages, {"EXTENSIONS": {Broken: 1}}).build()


async def test_components_are_built_from_the_crawler_or_the_settings() -> None:
    made: dict[str, Any] = {}

    class TagsRequests:
        def __init__(self, tag: str) -> None:
            self.tag = tag

        @classmethod
        def from_crawler(cls, crawler: Any) -> TagsRequests:
            made["downloader crawler"] = crawler
            return cls(crawler.settings.get("TAG"))

        def process_request(self, request: Any, spider: Any) -> None:
            request.headers["X-Tag"] = self.tag

    class CountsOutput:
        @classmethod
        def from_settings(cls, settings: Any) -> CountsOutput:
            made["spider mw settings"] = settings
            return cls()

        def process_spider_output(self, response: Any, result: Any, spider: Any) -> Any:
            yield from result

    class Stamps:
        def __init__(self, stats: Any) -> None:
            self.stats = stats

        @classmethod
        def from_crawler(cls, crawler: Any) -> Stamps:
            return cls(crawler.stats)

        def process_item(self, item: Any, spider: Any) -> Any:
            self.stats.inc_value("stamped", 1, start=100)
            return item

    tags: list[str] = []

    def handle(request: Request) -> str:
        tags.append(request.headers.text("X-Tag", ""))
        return "<p>1</p>"

    base = BASE
    crawler = Crawler(
        Pages,
        {
            **FAST,
            "DOWNLOAD_TRANSPORT": MockTransport(handle),
            "TAG": "mine",
            "DOWNLOADER_MIDDLEWARES": {TagsRequests: 543},
            "SPIDER_MIDDLEWARES": {CountsOutput: 543},
            "ITEM_PIPELINES": {Stamps: 300},
        },
        start_urls=[base + "/"],
    )
    stats = await crawler.run()
    assert tags == ["mine"]
    assert made["downloader crawler"] is crawler
    assert made["spider mw settings"] is crawler.settings
    assert stats["stamped"] == 101


async def test_spider_from_crawler_sets_crawler_settings_and_a_logger_named_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    base = BASE
    seen: dict[str, Any] = {}

    class Named(Spider):
        name = "named"

        def __init__(self, *args: Any, category: str = "", **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.category = category

        def parse(self, response: Response) -> Any:
            seen["crawler"] = self.crawler
            seen["setting"] = self.settings.getint("DEPTH_LIMIT")
            self.logger.info("parsed %s", response.url)
            try:
                raise ValueError("logged with its traceback")
            except ValueError as exc:
                from skitter._failure import Failure

                self.logger.error("failed", exc_info=Failure(exc))
            yield {"category": self.category}

    crawler = Crawler(Named, {**FAST, "DEPTH_LIMIT": "3"}, category="books", start_urls=[base])
    with caplog.at_level(logging.INFO):
        stats = await crawler.run()
    assert seen == {"crawler": crawler, "setting": 3}
    assert stats["item_scraped_count"] == 1
    record = next(r for r in caplog.records if r.getMessage().startswith("parsed"))
    assert record.name == "named"
    assert record.spider is crawler.spider  # type: ignore[attr-defined]
    failed = next(r for r in caplog.records if r.getMessage() == "failed")
    assert failed.exc_info is not None and failed.exc_info[0] is ValueError


async def test_built_ins_are_switched_off_by_their_scrapy_paths() -> None:
    seen: list[tuple[str, str]] = []

    def handle(request: Request) -> str:
        seen.append((request.headers.text("User-Agent", ""), request.headers.text("Referer", "")))
        if request.parsed_url.path == "/":
            return '<a href="/next">n</a>'
        return "<p>1</p>"

    base = BASE
    site = {**FAST, "DOWNLOAD_TRANSPORT": MockTransport(handle)}

    class Follows(Spider):
        name = "follows"

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a", callback=self.page)

        def page(self, response: Response) -> Any:
            yield {"url": response.url}

    off = {
        **site,
        "DOWNLOADER_MIDDLEWARES": {
            "skitter.downloadermiddlewares.useragent.UserAgentMiddleware": None
        },
        "SPIDER_MIDDLEWARES": {"skitter.spidermiddlewares.referer.RefererMiddleware": None},
    }
    await Crawler(Follows, site, start_urls=[base + "/"]).run()
    assert seen[1][0].startswith("skitter") and seen[1][1] == base + "/"
    seen.clear()
    await Crawler(Follows, off, start_urls=[base + "/"]).run()
    assert seen[1] == ("", "")
