"""The first requests of a crawl: Scrapy 2.13's ``async def start()`` (requests and
items) and the older ``start_requests()``, both pulled lazily, against a real server."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from skitter import Crawler, Request, Response, Spider

FAST = {"CONCURRENT_REQUESTS": 4}


async def counting_site(serve: Any) -> tuple[str, list[str]]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text=f"<h1>{request.path}</h1>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return await serve(app), hits


class Collect:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def process_item(self, item: Any, spider: Any) -> Any:
        self.items.append(item)
        return item


async def test_an_async_start_yields_requests_and_items(serve: Any) -> None:
    base, hits = await counting_site(serve)

    class Modern(Spider):
        name = "modern"

        async def start(self) -> Any:
            yield {"from": "start"}
            for n in range(3):
                await asyncio.sleep(0)
                yield Request(f"{base}/{n}")

        def parse(self, response: Response) -> Any:
            yield {"h1": response.css("h1::text").get()}

    collect = Collect()
    stats = await Crawler(Modern, {**FAST, "ITEM_PIPELINES": {collect: 100}}).run()
    assert sorted(hits) == ["/0", "/1", "/2"]
    assert {"from": "start"} in collect.items
    assert sorted(i["h1"] for i in collect.items if "h1" in i) == ["/0", "/1", "/2"]
    assert stats["item_scraped_count"] == 4
    assert stats["finish_reason"] == "finished"


async def test_start_wins_over_start_requests_as_in_scrapy(serve: Any) -> None:
    base, hits = await counting_site(serve)

    class Both(Spider):
        name = "both"

        async def start(self) -> Any:
            yield Request(f"{base}/from-start")

        def start_requests(self) -> Any:  # kept for Scrapy < 2.13, not called here
            yield Request(f"{base}/from-start-requests")

        def parse(self, response: Response) -> None:
            return None

    await Crawler(Both, FAST).run()
    assert hits == ["/from-start"]


async def test_the_default_start_yields_start_requests_and_start_urls(serve: Any) -> None:
    base, hits = await counting_site(serve)

    class Old(Spider):
        name = "old"

        def start_requests(self) -> Any:
            yield Request(f"{base}/old")

        def parse(self, response: Response) -> None:
            return None

    class Urls(Spider):
        name = "urls"
        start_urls = [f"{base}/a", f"{base}/a"]  # dont_filter: both are fetched

        def parse(self, response: Response) -> None:
            return None

    await Crawler(Old, FAST).run()
    await Crawler(Urls, FAST).run()
    assert hits == ["/old", "/a", "/a"]


async def test_a_start_that_calls_super_extends_the_default(serve: Any) -> None:
    base, hits = await counting_site(serve)

    class Extends(Spider):
        name = "extends"
        start_urls = [f"{base}/url"]

        async def start(self) -> Any:
            async for obj in super().start():
                yield obj
            yield Request(f"{base}/extra")

        def parse(self, response: Response) -> None:
            return None

    await Crawler(Extends, {"CONCURRENT_REQUESTS": 1}).run()
    assert hits == ["/url", "/extra"]


async def test_a_process_start_middleware_sees_what_start_yields(serve: Any) -> None:
    base, hits = await counting_site(serve)

    class Tag:
        async def process_start(self, start: Any) -> Any:
            async for request in start:
                yield request.replace(url=request.url + "-tagged")

    class Modern(Spider):
        name = "tagged"

        async def start(self) -> Any:
            yield Request(f"{base}/x")

        def parse(self, response: Response) -> None:
            return None

    await Crawler(Modern, {**FAST, "SPIDER_MIDDLEWARES": {Tag: 10}}).run()
    assert hits == ["/x-tagged"]
