"""The site the media pipeline tests crawl: a page of items and real images made with
Pillow at test time, served by aiohttp on 127.0.0.1, counting hits and concurrency."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from io import BytesIO
from typing import Any

from aiohttp import web
from PIL import Image

from skitter import Crawler, Request, Spider

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4, "LOG_LEVEL": "WARNING"}
GiB = 1024**3


def png(width: int, height: int, mode: str = "RGBA") -> bytes:
    buf = BytesIO()
    color = (200, 30, 30, 128) if mode == "RGBA" else (200, 30, 30)
    Image.new(mode, (width, height), color).save(buf, "PNG")
    return buf.getvalue()


def jpeg(width: int, height: int) -> bytes:
    buf = BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buf, "JPEG")
    return buf.getvalue()


class MediaSite:
    """``/items`` lists ``items`` as JSON; ``files`` maps a path to (type, bytes). Also
    ``/endless.jpg`` (a body that never ends) and ``/huge.jpg`` (says 1 GiB)."""

    def __init__(self, files: dict[str, tuple[str, bytes]], delay: float = 0.0) -> None:
        self.files = files
        self.items: list[dict[str, Any]] = []
        self.delay = delay
        self.hits: Counter[str] = Counter()
        self.hosts: Counter[str] = Counter()
        self.active = 0
        self.max_active = 0
        self.app = web.Application()
        self.app.router.add_route("GET", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] += 1
        self.hosts[request.url.host or ""] += 1
        if request.path == "/items":
            return web.json_response(self.items)
        if request.path in ("/endless.jpg", "/huge.jpg"):
            return await self._stream(request)
        found = self.files.get(request.path)
        if found is None:
            return web.Response(status=404, text="not found")
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await asyncio.sleep(self.delay)  # the site's own pace, so that downloads overlap
        finally:
            self.active -= 1
        content_type, body = found
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "image/jpeg"})
        if request.path == "/huge.jpg":
            response.content_length = GiB
        await response.prepare(request)
        chunk = b"\xff" * 65536
        for _ in range(GiB // len(chunk)):  # bounded: the client hangs up long before
            await response.write(chunk)
        return response


class ItemsSpider(Spider):
    """Yields every item of ``/items`` (dicts, as the site lists them)."""

    name = "media"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/items")

    def parse(self, response: Any) -> Any:
        yield from json.loads(response.text)


async def crawl(
    settings: dict[str, Any], spidercls: type[Spider] = ItemsSpider, **kwargs: Any
) -> tuple[list[Any], dict[str, Any]]:
    """Run to the end; the items that came out of every pipeline, and the stats."""
    items: list[Any] = []

    class Collect:
        def process_item(self, item: Any, spider: Spider) -> Any:
            items.append(item)
            return item

    pipelines = {**settings.get("ITEM_PIPELINES", {}), Collect: 900}
    merged = {**FAST, **settings, "ITEM_PIPELINES": pipelines}
    stats = await Crawler(spidercls, merged, **kwargs).run()
    return items, dict(stats)
