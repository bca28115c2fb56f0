"""Whole crawls with rendered requests: JavaScript-built items, a page that never
finishes loading (timed out, retried), a browser killed mid-crawl (no task lost), and a
crawl that renders nothing (Chromium never started)."""

from __future__ import annotations

from typing import Any

from skitter import Crawler, Request, Response, Spider

from .conftest import ITEM_COUNT, JsSite, chromium_pids, kill_chromium

FAST = {"RETRY_DELAYS": [0.0], "DOWNLOAD_TIMEOUT": 10.0, "LOG_LEVEL": "WARNING"}


def item_spider(base: str, *, render: bool, slow: bool = False) -> type[Spider]:
    """Follows the JavaScript-built list to each item page; one item per page."""
    suffix = "?slow=1" if slow else ""

    class Items(Spider):
        name = "items"
        start_urls = [base + "/items"]
        found: list[dict[str, str]] = []

        def start_requests(self) -> Any:
            yield Request(base + "/items", render=render)

        def parse(self, response: Response) -> Any:
            for href in response.css("a.item::attr(href)").getall():
                yield response.follow(href + suffix, self.parse_item, render=render)

        def parse_item(self, response: Response) -> Any:
            item = {"name": response.css("h1::text").get("")}
            type(self).found.append(item)
            yield item

    Items.found = []
    return Items


EXPECTED = sorted(f"Item {n}" for n in range(1, ITEM_COUNT + 1))


async def test_plain_http_sees_no_items_and_rendering_sees_all(site: tuple[JsSite, str]) -> None:
    _, base = site
    plain = item_spider(base, render=False)
    stats = await Crawler(plain, FAST).run()
    assert plain.found == []
    assert stats.get("browser/launch_count") is None

    rendered = item_spider(base, render=True)
    stats = await Crawler(rendered, FAST).run()
    assert sorted(item["name"] for item in rendered.found) == EXPECTED
    assert stats["item_scraped_count"] == ITEM_COUNT
    assert stats["browser/page_count"] == ITEM_COUNT + 1


async def test_a_page_that_never_finishes_loading_is_retried(site: tuple[JsSite, str]) -> None:
    js_site, base = site
    seen: list[str] = []
    attempts: list[str] = []
    limits: list[float | None] = []

    class FirstAttemptHangs:
        """Which attempt hangs is the test's decision, not a count of visits (on a loaded
        machine the first may time out before it reaches the site): the first goes with
        its script held and a 1 s limit, so only its timeout can end it; the retry goes
        with the script served and the suite's hang guard (FAST's DOWNLOAD_TIMEOUT)."""

        def process_request(self, request: Request, spider: Any) -> None:
            attempts.append(request.url)
            if len(attempts) == 1:
                request.meta["download_timeout"] = 1.0
            else:  # a retry copies the meta: its 1 s limit goes, the hang guard is back
                limits.append(request.meta.pop("download_timeout", None))
                js_site.hold_load = False

    class Hanging(Spider):
        name = "hanging"

        def start_requests(self) -> Any:
            yield Request(base + "/hangs", render=True)

        def parse(self, response: Response) -> Any:
            seen.append(response.css("#done::text").get(""))

    settings = {**FAST, "DOWNLOADER_MIDDLEWARES": {FirstAttemptHangs: 50}}
    stats = await Crawler(Hanging, settings).run()
    assert seen == ["loaded"]
    assert attempts == [base + "/hangs"] * 2
    assert limits == [1.0]  # the retry came with the first attempt's limit, taken off
    assert stats["downloader/exception_type_count/DownloadTimeout"] == 1


async def test_killing_the_browser_mid_crawl_loses_no_task(site: tuple[JsSite, str]) -> None:
    js_site, base = site
    killed: list[int] = []

    def kill_once() -> None:
        if not killed:
            killed.append(kill_chromium())

    js_site.on_slow_script.append(kill_once)  # while an item page is loading
    spider = item_spider(base, render=True, slow=True)
    stats = await Crawler(spider, FAST).run()
    assert killed == [1]
    assert sorted(item["name"] for item in spider.found) == EXPECTED
    assert stats["browser/restart_count"] == 1
    assert stats["downloader/exception_type_count/ConnectionLost"] >= 1
    assert stats["item_scraped_count"] == ITEM_COUNT


async def test_a_crawl_that_renders_nothing_never_starts_chromium(
    site: tuple[JsSite, str],
) -> None:
    _, base = site
    running: list[list[int]] = []

    class Plain(Spider):
        name = "plain"
        start_urls = [base + "/items", base + "/item/1"]

        def parse(self, response: Response) -> Any:
            running.append(chromium_pids())
            yield {"url": response.url}

    stats = await Crawler(Plain, FAST).run()
    assert running == [[], []]
    assert stats["item_scraped_count"] == 2
    assert not any(key.startswith("browser/") for key in stats)
