"""The demo shop's JavaScript-built market: invisible over plain HTTP, and crawled by
DemoSpider through the browser, so the whole crawl yields exactly ``expected_items()``."""

from __future__ import annotations

import aiohttp

from skitter import Crawler
from skitter.demo import DemoSpider, expected_items, serve_demo_site
from skitter.demo._market import market_products
from skitter.http import Response


class Collect:
    items: list[dict] = []

    def process_item(self, item: dict, spider: object) -> dict:
        type(self).items.append(dict(item))
        return item


async def test_the_market_is_empty_over_http_and_crawled_when_rendered(chromium: None) -> None:
    Collect.items = []
    async with serve_demo_site() as base_url:
        async with aiohttp.ClientSession() as session, session.get(base_url + "/market") as raw:
            plain = Response(str(raw.url), raw.status, raw.headers, await raw.read())
        assert plain.css("section.market").get() is not None
        assert plain.css("section.market a.title") == []  # built by JavaScript
        settings = {"ITEM_PIPELINES": {Collect: 100}, "LOG_LEVEL": "WARNING"}
        stats = await Crawler(DemoSpider, settings, start_url=base_url).run()
    scraped = sorted(Collect.items, key=lambda item: item["sku"])
    assert scraped == expected_items(rendered=True)
    market = {p.sku for p in market_products()}
    assert market <= {item["sku"] for item in scraped}
    assert stats["browser/page_count"] == len(market) + 1  # the listing and its products
