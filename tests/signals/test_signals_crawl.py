"""Scrapy's signals in real crawls: where each is sent, with what. The site is answered in
memory (``MockTransport``), except where the body's way over the wire is the point."""

from __future__ import annotations

import asyncio
import gzip
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from skitter import CloseSpider, Crawler, DropItem, Request, Response, Spider, signals
from skitter.exceptions import DontCloseSpider
from skitter.signals import SignalManager
from skitter.testing import MockTransport

PAGES = {
    "/": '<a href="/a">a</a> <a href="/b">b</a> <a href="/a">a again</a><a href="/boom">boom</a>',
    "/a": "<p>1</p><p>2</p><p>3</p>",
    "/b": "<p>4</p>",
    "/boom": "boom",
}
BASE = "http://site.test"


def site(request: Request) -> str:
    return PAGES[request.parsed_url.path]


FAST = {
    "RETRY_DELAYS": [0.0],
    "CONCURRENT_REQUESTS": 4,
    "RETRY_TIMES": 0,
    "DOWNLOAD_TRANSPORT": MockTransport(site),
}

ALL = [
    "engine_started",
    "engine_stopped",
    "spider_opened",
    "spider_idle",
    "spider_closed",
    "spider_error",
    "request_scheduled",
    "request_dropped",
    "request_reached_downloader",
    "request_left_downloader",
    "response_received",
    "response_downloaded",
    "item_scraped",
    "item_dropped",
    "item_error",
]


class Picky:
    def process_item(self, item: dict[str, int], spider: Spider) -> dict[str, int]:
        if item["n"] == 2:
            raise DropItem("no twos")
        if item["n"] == 3:
            raise RuntimeError("pipeline bug")
        return item


class Recording(Spider):
    """Connects a handler to every signal, in from_crawler, as Scrapy's docs show."""

    name = "recording"
    seen: list[tuple[str, dict[str, Any]]]

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Recording:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, Recording)
        spider.seen = []
        for name in ALL:
            crawler.signals.connect(spider.recorder(name), signal=getattr(signals, name))
        return spider

    def recorder(self, name: str) -> Any:
        def record(**kwargs: Any) -> None:
            kwargs.pop("signal")
            kwargs.pop("sender")
            self.seen.append((name, kwargs))

        return record

    def parse(self, response: Response) -> Any:
        if response.url.endswith("/boom"):
            raise ValueError("boom")
        if response.url.endswith("/"):
            yield from response.follow_all(css="a")
            return
        for n in response.css("p::text").getall():
            yield {"n": int(n)}


async def test_every_signal_is_sent_where_scrapy_sends_it() -> None:
    base = BASE
    crawler = Crawler(Recording, {**FAST, "ITEM_PIPELINES": {Picky: 100}}, start_urls=[base + "/"])
    stats = await crawler.run()
    spider = crawler.spider
    seen = spider.seen
    names = [name for name, _ in seen]
    counts = Counter(names)
    assert names[:2] == ["spider_opened", "engine_started"]
    assert names[-3:] == ["spider_idle", "spider_closed", "engine_stopped"]
    assert counts["request_scheduled"] == 5  # /, /a, /b, /boom and /a again (as Scrapy)
    assert counts["request_dropped"] == 1  # /a again, after its request_scheduled
    assert counts["request_reached_downloader"] == 4
    assert counts["request_left_downloader"] == 4
    assert counts["response_downloaded"] == 4
    assert counts["response_received"] == 4
    assert counts["item_scraped"] == 2  # 1 and 4
    assert counts["item_dropped"] == 1
    assert counts["item_error"] == 1
    assert counts["spider_error"] == 1
    assert stats["item_scraped_count"] == 2

    def first(name: str) -> dict[str, Any]:
        return next(kwargs for n, kwargs in seen if n == name)

    assert first("spider_opened") == {"spider": spider}
    assert first("engine_started") == {}
    assert first("spider_closed") == {"spider": spider, "reason": "finished"}
    dropped = first("request_dropped")
    assert dropped["request"].url == base + "/a" and dropped["spider"] is spider
    received = first("response_received")
    assert received["response"].url == base + "/"
    assert received["request"] is received["response"].request
    scraped = [kw for n, kw in seen if n == "item_scraped"]
    assert sorted(kw["item"]["n"] for kw in scraped) == [1, 4]
    assert all(kw["response"].url in (base + "/a", base + "/b") for kw in scraped)
    item_dropped = first("item_dropped")
    assert item_dropped["item"] == {"n": 2}
    assert isinstance(item_dropped["exception"], DropItem)
    item_error = first("item_error")
    assert item_error["item"] == {"n": 3}
    assert item_error["failure"].check(RuntimeError) is RuntimeError
    spider_error = first("spider_error")
    assert spider_error["failure"].getErrorMessage() == "boom"
    assert spider_error["response"].url == base + "/boom"
    # per request: reached the downloader, downloaded, left it, then received
    for url in (base + "/a", base + "/b"):
        order = [
            n
            for n, kw in seen
            if n.startswith(("request_", "response_"))
            and n not in ("request_scheduled", "request_dropped")
            if (kw.get("request") or kw.get("response").request).url == url  # type: ignore[union-attr]
        ]
        assert order == [
            "request_reached_downloader",
            "response_downloaded",
            "request_left_downloader",
            "response_received",
        ]


async def test_async_handlers_are_awaited_where_the_signal_is_sent() -> None:
    base = BASE
    log: list[str] = []

    class Slow(Spider):
        name = "slow"
        start_urls = [base + "/b"]

        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Spider:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.item_done, signals.item_scraped)
            crawler.signals.connect(spider.on_closed, signals.spider_closed)
            return spider

        async def item_done(self, item: Any) -> None:
            await asyncio.sleep(0.05)  # a handler that takes time: the subject
            log.append(f"scraped {item['n']}")

        async def on_closed(self, spider: Spider, reason: str) -> None:
            await asyncio.sleep(0.01)  # a handler that takes time: the subject
            log.append(f"closed {reason}")
            self.crawler.stats.set_value("closed_by_handler", reason)  # type: ignore[attr-defined]

        def parse(self, response: Response) -> Any:
            yield {"n": 4}

    crawler = Crawler(Slow, FAST)
    stats = await crawler.run()
    assert log == ["scraped 4", "closed finished"]
    assert crawler.stats.get("closed_by_handler") == "finished"
    assert stats["item_scraped_count"] == 1


async def test_a_failing_handler_is_logged_and_counted_and_the_crawl_goes_on() -> None:
    base = BASE

    class Faulty(Spider):
        name = "faulty"
        start_urls = [base + "/a"]

        def parse(self, response: Response) -> Any:
            for n in response.css("p::text").getall():
                yield {"n": int(n)}

    def broken(item: Any) -> None:
        raise KeyError("handler bug")

    crawler = Crawler(Faulty, FAST)
    crawler.signals.connect(broken, signal=signals.item_scraped)
    stats = await crawler.run()
    assert stats["item_scraped_count"] == 3
    assert stats["signals/errors"] == 3
    assert stats["finish_reason"] == "finished"


async def test_dont_close_spider_keeps_an_idle_spider_open_for_more_requests() -> None:
    base = BASE
    batches = [[base + "/a"], [base + "/b"]]
    idle_calls: list[int] = []

    class Fed(Spider):
        """Takes more work each time it is idle, as a scrapy-redis spider does."""

        name = "fed"
        start_urls = [base + "/b"]

        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Spider:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.idle, signal=signals.spider_idle)
            return spider

        def idle(self, spider: Spider) -> None:
            idle_calls.append(1)
            if batches:
                for url in batches.pop(0):
                    self.crawler.engine.crawl(Request(url, dont_filter=True))  # type: ignore[attr-defined]
                raise DontCloseSpider

        def parse(self, response: Response) -> Any:
            for n in response.css("p::text").getall():
                yield {"n": int(n)}

    stats = await Crawler(Fed, FAST).run()
    assert stats["item_scraped_count"] == 1 + 3 + 1
    assert len(idle_calls) == 3
    assert stats["finish_reason"] == "finished"


async def test_dont_close_spider_alone_asks_again_later() -> None:
    base = BASE
    idle_calls: list[int] = []

    class Waits(Spider):
        name = "waits"
        start_urls = [base + "/b"]

        def parse(self, response: Response) -> Any:
            yield {"n": 4}

    def idle() -> None:
        idle_calls.append(1)
        if len(idle_calls) < 3:
            raise DontCloseSpider

    crawler = Crawler(Waits, FAST)
    crawler.signals.connect(idle, signal=signals.spider_idle)
    stats = await crawler.run()
    assert len(idle_calls) == 3
    assert stats["finish_reason"] == "finished"


async def test_close_spider_from_an_idle_handler_gives_its_reason() -> None:
    base = BASE

    class Once(Spider):
        name = "once"
        start_urls = [base + "/b"]

        def parse(self, response: Response) -> Any:
            yield {"n": 4}

    def idle() -> None:
        raise CloseSpider("no more work")

    crawler = Crawler(Once, FAST)
    crawler.signals.connect(idle, signal=signals.spider_idle)
    stats = await crawler.run()
    assert stats["finish_reason"] == "no more work"
    assert stats.get("signals/errors") is None


async def test_engine_close_spider_from_a_handler() -> None:
    base = BASE

    class Stopper(Spider):
        name = "stopper"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a", callback=self.page)

        def page(self, response: Response) -> Any:
            yield {"url": response.url}

    crawler = Crawler(Stopper, {**FAST, "CONCURRENT_REQUESTS": 1})

    def on_response(response: Response, spider: Spider) -> None:
        if response.url == base + "/":
            crawler.engine.close_spider(spider, "seen enough")  # type: ignore[union-attr]

    crawler.signals.connect(on_response, signal=signals.response_received)
    stats = await crawler.run()
    assert stats["finish_reason"] == "seen enough"
    assert stats.get("item_scraped_count") is None


@pytest.mark.parametrize("via", ["aiohttp", "httpx", "curl"])  # every HTTP transport
async def test_headers_and_bytes_received_see_the_body_as_it_came(serve: Any, via: str) -> None:
    plain = b"<p>" + b"x" * 200_000 + b"</p>"
    packed = gzip.compress(plain)

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.path == "/gzip":
            return web.Response(body=packed, headers={"Content-Encoding": "gzip"})
        if request.path == "/chunked":
            response = web.StreamResponse()
            await response.prepare(request)
            for part in (plain[:1000], plain[1000:]):
                await response.write(part)
            await response.write_eof()
            return response
        return web.Response(body=plain)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    base = await serve(app)
    heads: dict[str, int] = {}
    received: dict[str, bytes] = {}
    sizes: dict[str, int] = {}

    class Bodies(Spider):
        name = "bodies"
        start_urls = [base + "/gzip", base + "/plain", base + "/chunked"]

        def parse(self, response: Response) -> Any:
            sizes[response.url.rsplit("/", 1)[1]] = len(response.body)
            yield {"url": response.url}

    def on_headers(headers: Any, body_length: int, request: Request, spider: Spider) -> None:
        assert "Content-Type" in headers and isinstance(spider, Bodies)
        heads[request.url.rsplit("/", 1)[1]] = body_length

    def on_bytes(data: bytes, request: Request) -> None:
        key = request.url.rsplit("/", 1)[1]
        received[key] = received.get(key, b"") + data

    crawler = Crawler(Bodies, {**FAST, "DOWNLOAD_TRANSPORT": via})
    crawler.signals.connect(on_headers, signal=signals.headers_received)
    crawler.signals.connect(on_bytes, signal=signals.bytes_received)
    await crawler.run()
    assert heads == {"gzip": len(packed), "plain": len(plain), "chunked": -1}
    assert received == {"gzip": packed, "plain": plain, "chunked": plain}
    assert sizes == {"gzip": len(plain), "plain": len(plain), "chunked": len(plain)}


async def test_feed_signals_come_once_the_feeds_are_closed(tmp_path: Any) -> None:
    base = BASE
    seen: list[tuple[str, int]] = []

    class Feeds(Spider):
        name = "feeds"
        start_urls = [base + "/a"]

        def parse(self, response: Response) -> Any:
            for n in response.css("p::text").getall():
                yield {"n": int(n)}

    out = tmp_path / "items.jsonl"

    def slot_closed(slot: Any) -> None:
        seen.append(("slot", slot.item_count))
        assert out.read_text().count("\n") == 3  # written and closed by now

    crawler = Crawler(Feeds, {**FAST, "FEEDS": {str(out): {"format": "jsonl"}}})
    crawler.signals.connect(slot_closed, signal=signals.feed_slot_closed)
    crawler.signals.connect(lambda: seen.append(("exporter", 0)), signals.feed_exporter_closed)
    await crawler.run()
    assert seen == [("slot", 3), ("exporter", 0)]


async def test_a_crawl_nobody_listens_to_sends_no_signal(monkeypatch: Any) -> None:
    base = BASE
    sent: list[Any] = []
    original = SignalManager.send_catch_log_async

    async def counting(self: SignalManager, signal: Any, **kwargs: Any) -> Any:
        sent.append(signal)
        return await original(self, signal, **kwargs)

    class Quiet(Spider):
        """Recording's crawl (every kind of event), with no handler connected."""

        name = "quiet"
        parse = Recording.parse

    monkeypatch.setattr(SignalManager, "send_catch_log_async", counting)
    settings = {**FAST, "ITEM_PIPELINES": {Picky: 100}}
    stats = await Crawler(Quiet, settings, start_urls=[base + "/"]).run()
    assert stats["item_scraped_count"] == 2
    assert sent == []
    # the same crawl with every handler connected: one send per event heard
    crawler = Crawler(Recording, settings, start_urls=[base + "/"])
    await crawler.run()
    assert len(sent) == len(crawler.spider.seen) > 30


async def test_a_crawl_that_cannot_open_never_starts_nor_stops_the_engine(tmp_path: Any) -> None:
    heard: list[str] = []

    class Refused:
        def open_spider(self, spider: Spider) -> None:
            raise OSError("cannot open the store")

    class Nothing(Spider):
        name = "nothing"

    crawler = Crawler(Nothing, {**FAST, "ITEM_PIPELINES": {Refused: 1}})
    for name in ("engine_started", "engine_stopped", "spider_opened", "spider_closed"):
        crawler.signals.connect(lambda name=name: heard.append(name), getattr(signals, name))
    with pytest.raises(OSError, match="cannot open the store"):
        await crawler.run()
    assert heard == ["spider_closed"]  # closed all the same (as Scrapy's close after a failed open)
