"""BaseSpiderMiddleware (Scrapy 2.13): a project's middleware sees each request and item
once, through get_processed_request / get_processed_item, in a real crawl."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from skitter import Crawler, Request, Spider
from skitter.spidermiddlewares.base import BaseSpiderMiddleware

SEEN: list[tuple[str, Any]] = []


class Pages(Spider):
    name = "pages"
    allowed_schemes: ClassVar[list[str]] = ["data"]
    items: ClassVar[list[Any]] = []

    async def start(self) -> Any:
        for n in range(4):
            yield Request(f"data:,{n}")

    def parse(self, response: Any) -> Any:
        n = int(response.text)
        yield {"n": n}
        if n < 2:
            yield Request(f"data:,{n + 10}")


class Tagging(BaseSpiderMiddleware):
    """Drops start request 3 and follow-up 11; tags items with where they came from."""

    def get_processed_request(self, request: Request, response: Any) -> Request | None:
        SEEN.append(("request", response is None))
        if request.url in ("data:,3", "data:,11"):
            return None
        return request

    def get_processed_item(self, item: Any, response: Any) -> Any:
        assert self.crawler is not None  # built with from_crawler
        return {**item, "from": response.url}


class Collect:
    def process_item(self, item: Any, spider: Any) -> Any:
        Pages.items.append(item)
        return item


def test_requests_and_items_pass_through_the_two_hooks() -> None:
    SEEN.clear()
    Pages.items = []
    settings = {
        "LOG_LEVEL": "WARNING",
        "SPIDER_MIDDLEWARES": {f"{__name__}.Tagging": 500},
        "ITEM_PIPELINES": {f"{__name__}.Collect": 100},
    }
    asyncio.run(Crawler(Pages, settings).run())
    assert sorted(item["n"] for item in Pages.items) == [0, 1, 2, 10]
    assert all(item["from"] == f"data:,{item['n']}" for item in Pages.items)
    assert SEEN.count(("request", True)) == 4  # the start requests, response None
    assert SEEN.count(("request", False)) == 2  # follow-ups of 0 and 1
