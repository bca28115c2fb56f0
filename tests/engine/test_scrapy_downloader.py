"""Scrapy's ``crawler.engine.downloader`` (and ``scrapy.core.downloader``'s ``Downloader``
and ``Slot``): what plug-ins read of it, answered from skitter's scheduler and
downloader. scrapy-splash keys its requests' slot with ``_get_slot_key``; scrapy-poet
finds its middleware in ``middleware.middlewares``."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.core.downloader import Downloader, Slot
from skitter.crawler import run_crawlers
from skitter.exceptions import ScrapyDeprecationWarning

FAST = {"LOG_LEVEL": "WARNING", "RETRY_TIMES": 0, "STATS_DUMP": False}


def _site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    return app


class SlotKeyMiddleware:
    """Does what scrapy-splash's middleware does: asks the engine's downloader for the
    request's slot key and pins the request to it; records what else it saw there."""

    seen: dict[str, Any]

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.seen = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> SlotKeyMiddleware:
        return cls(crawler)

    def process_request(self, request: Request, spider: Any) -> None:
        downloader = self.crawler.engine.downloader
        request.meta["download_slot"] = "pinned-" + downloader._get_slot_key(request, None)
        self.seen["key"] = downloader.get_slot_key(request)
        self.seen["mine"] = [m for m in downloader.middleware.middlewares if m is self]
        self.seen["hooks"] = downloader.middleware.methods["process_request"]
        slots = downloader.slots
        self.seen["slots"] = dict(slots)
        with pytest.raises(AttributeError, match="DOWNLOAD_SLOTS"):
            next(iter(slots.values())).delay = 5.0
        with pytest.raises(AttributeError, match="built once"):
            downloader.middleware.middlewares = ()


class Pages(Spider):
    name = "pages"
    start_urls: list[str] = []

    def parse(self, response: Response) -> None:
        self.slot = response.meta.get("download_slot")


async def test_a_middleware_keys_its_request_by_the_engine_downloaders_slot_key(
    serve: Any,
) -> None:
    base = await serve(_site())
    settings = {
        **FAST,
        "DOWNLOADER_MIDDLEWARES": {SlotKeyMiddleware: 725},
        "DOWNLOAD_SLOTS": {"127.0.0.1": {"concurrency": 3, "delay": 0.0}},
    }
    crawler = Crawler(Pages, settings, start_urls=[base + "/p"])
    await crawler.run()
    spider = crawler.spider
    assert spider.slot == "pinned-127.0.0.1"  # the host, as the scheduler keys it
    middleware = next(
        m
        for m in crawler.engine.downloader.middleware.middlewares
        if isinstance(m, SlotKeyMiddleware)
    )  # type: ignore[union-attr]
    seen = middleware.seen
    assert seen["key"] == "pinned-127.0.0.1", "the key follows meta['download_slot']"
    assert seen["mine"] == [middleware]
    assert middleware.process_request in seen["hooks"]
    slot = seen["slots"]["127.0.0.1"]  # the start request's slot, live in the scheduler
    assert isinstance(slot, Slot)
    assert (slot.concurrency, slot.delay) == (3, 0.0)
    with pytest.raises(AttributeError, match="in_flight and queued"):
        _ = slot.active


async def test_engine_downloader_is_refused_when_the_engine_runs_several_spiders(
    serve: Any,
) -> None:
    base = await serve(_site())

    class Asker(Spider):
        start_urls: list[str] = []

        def parse(self, response: Response) -> None:
            try:
                _ = self.crawler.engine.downloader
            except AttributeError as exc:
                self.refused = str(exc)

    one = type("One", (Asker,), {"name": "one"})
    two = type("Two", (Asker,), {"name": "two"})
    crawlers = [
        Crawler(one, FAST, start_urls=[base + "/a"]),
        Crawler(two, FAST, start_urls=[base + "/b"]),
    ]
    await run_crawlers(crawlers)
    for crawler in crawlers:
        assert "this engine runs 'one', 'two'" in crawler.spider.refused


def test_a_stand_alone_downloader_makes_slots_from_the_settings() -> None:
    params = {"concurrency": 1, "delay": 2.0, "randomize_delay": False}
    crawler = Crawler(Pages, {**FAST, "DOWNLOAD_SLOTS": {"example.com": params}})
    downloader = Downloader(crawler)
    key, slot = downloader._get_slot(Request("https://example.com/x"))
    assert key == "example.com"
    assert (slot.concurrency, slot.delay, slot.randomize_delay) == (1, 2.0, False)
    assert downloader.slots == {"example.com": slot}
    assert downloader._get_slot(Request("https://example.com/y"))[1] is slot
    with pytest.warns(ScrapyDeprecationWarning, match=r"Downloader\._get_slot\(\)"):
        downloader._get_slot(Request("https://example.com/z"), spider=object())
    slot.delay = 1.0  # a slot of its own: Scrapy's plain attribute
    assert slot.download_delay() == 1.0
    with pytest.raises(AttributeError, match=r"crawler\.engine\.downloader"):
        _ = downloader.middleware.middlewares


def test_slot_repr_is_scrapys() -> None:
    slot = Slot(concurrency=8, delay=0.1, randomize_delay=True)
    assert repr(slot) == "Slot(concurrency=8, delay=0.1, randomize_delay=True)"
    assert slot.free_transfer_slots() == 8
