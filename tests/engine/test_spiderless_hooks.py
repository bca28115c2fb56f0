"""Middleware hooks written without the ``spider`` argument (Scrapy 2.13 made it optional
and deprecated it): skitter calls them without it, and still passes it to those that take it."""

from __future__ import annotations

from typing import Any

from skitter import signals
from skitter.crawler import Crawler
from skitter.http import HtmlResponse, Request
from skitter.spider import Spider

calls: list[str] = []


class Answering:
    """A downloader middleware of Scrapy 2.13's style: it answers every request itself."""

    def process_request(self, request: Request) -> HtmlResponse:
        calls.append("process_request")
        return HtmlResponse(request.url, body=b"<p>hi</p>", request=request)

    def process_response(self, request: Request, response: Any) -> Any:
        calls.append("process_response")
        return response


class OldStyle:
    """One that still takes the spider."""

    def process_response(self, request: Request, response: Any, spider: Any) -> Any:
        calls.append(f"old process_response {spider.name}")
        return response


class Tagging:
    """A spider middleware of Scrapy 2.13's style."""

    def process_spider_input(self, response: Any) -> None:
        calls.append("process_spider_input")

    async def process_spider_output(self, response: Any, result: Any) -> Any:
        async for obj in result:
            yield {**obj, "tagged": True}


class One(Spider):
    name = "one"

    async def start(self):  # type: ignore[override]
        yield Request("http://127.0.0.1:9/")

    def parse(self, response: Any) -> Any:
        yield {"text": response.css("p::text").get()}


async def test_hooks_without_the_spider_argument_are_called_without_it() -> None:
    calls.clear()
    items: list[Any] = []
    settings = {
        "DOWNLOADER_MIDDLEWARES": {Answering: 1, OldStyle: 0},
        "SPIDER_MIDDLEWARES": {Tagging: 1},
    }
    crawler = Crawler(One, settings)
    crawler.signals.connect(lambda item, **_: items.append(item), signals.item_scraped)
    await crawler.run()
    assert items == [{"text": "hi", "tagged": True}]
    assert calls == [
        "process_request",
        "process_response",
        "old process_response one",
        "process_spider_input",
    ]
