"""The small sites the spider-kind tests crawl: answered in memory (``Site.settings``
crawl it through ``MockTransport``), or served by aiohttp on 127.0.0.1 (``Site.app``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.testing import MockResponse, MockTransport, refused_port

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4}

Page = str | bytes | tuple[int, str] | Callable[[web.Request], Any]


class Site:
    """Serves ``pages`` (path -> HTML text, ``(content_type, body)`` as bytes, or a
    handler) and counts hits per path: in memory at ``base`` (crawl it with
    ``settings``; a handler takes the skitter Request), or as an aiohttp app (``app``; a
    handler takes the aiohttp request)."""

    #: 127.0.0.1 (what ported spiders allow) on a port where nothing listens: a request
    #: that reached the network instead of ``MockTransport`` would be refused.
    base = f"http://127.0.0.1:{refused_port()}"

    def __init__(self, pages: dict[str, Any]) -> None:
        self.pages = pages
        self.hits: Counter[str] = Counter()
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)
        self.settings = {"DOWNLOAD_TRANSPORT": MockTransport(self.answer)}

    async def answer(self, request: Request) -> Any:
        path_qs = request.parsed_url.path_qs
        self.hits[path_qs] += 1
        page = self.pages.get(path_qs, self.pages.get(request.parsed_url.path))
        if page is None:
            return MockResponse.text("not found", 404)
        if callable(page):
            result = page(request)
            if asyncio.iscoroutine(result):
                result = await result
            return result
        if isinstance(page, tuple):
            content_type, body = page
            return MockResponse(200, {"Content-Type": content_type}, body)
        return MockResponse.html(f"<html><body>{page}</body></html>")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path_qs] += 1
        page = self.pages.get(request.path_qs, self.pages.get(request.path))
        if page is None:
            return web.Response(status=404, text="not found")
        if callable(page):
            result = page(request)
            if asyncio.iscoroutine(result):
                result = await result
            return result  # type: ignore[no-any-return]
        if isinstance(page, tuple):
            content_type, body = page
            return web.Response(body=body, headers={"Content-Type": content_type})
        return web.Response(text=f"<html><body>{page}</body></html>", content_type="text/html")


async def crawl_items(
    spidercls: type[Spider], settings: dict[str, Any] | None = None, **kwargs: Any
) -> tuple[list[Any], dict[str, Any]]:
    """Run ``spidercls`` to the end; the items it scraped, in order, and the stats."""
    items: list[Any] = []

    class Collect:
        def process_item(self, item: Any, spider: Spider) -> Any:
            items.append(item)
            return item

    merged = {**FAST, "ITEM_PIPELINES": {Collect: 100}, **(settings or {})}
    stats = await Crawler(spidercls, merged, **kwargs).run()
    return items, dict(stats)
