"""End-to-end crawls: callbacks, termination, order, dedupe, retries, errors. Each test
builds the small site it needs, answered in memory (``MockTransport``: the crawl is the
real one, only the socket is missing); the lease test waits on a real server."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from skitter import CloseSpider, Crawler, DropItem, Request, Response, Spider, run_crawlers
from skitter.testing import MockResponse, MockTransport, virtual_clock

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 8}


def page(body: str, status: int = 200) -> web.Response:
    return web.Response(
        text=f"<html><body>{body}</body></html>", status=status, content_type="text/html"
    )


def links(*hrefs: str) -> str:
    return "".join(f'<a href="{h}">{h}</a>' for h in hrefs)


def reply(body: str, status: int = 200) -> MockResponse:
    return MockResponse.html(f"<html><body>{body}</body></html>", status)


class Recorder:
    """A site that counts hits per path and serves pages from a dict: in memory
    (``fast``: the settings that crawl it through ``transport``), or as an aiohttp app.
    A callable page is ``(request, hit) -> answer``."""

    base = "http://site.test"

    def __init__(self, pages: dict[str, Any]) -> None:
        self.pages = pages
        self.hits: Counter[str] = Counter()
        self.order: list[str] = []
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)
        self.transport = MockTransport(self.answer)
        self.fast = {**FAST, "DOWNLOAD_TRANSPORT": self.transport}

    async def answer(self, request: Request) -> Any:
        url = request.parsed_url
        self.hits[url.path] += 1
        self.order.append(url.path_qs)
        handler = self.pages.get(url.path)
        if handler is None:
            return reply("not found", 404)
        if callable(handler):
            result = handler(request, self.hits[url.path])
            if asyncio.iscoroutine(result):
                result = await result
            return result
        return reply(handler)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path_qs
        self.hits[request.path] += 1
        self.order.append(path)
        handler = self.pages.get(request.path)
        if handler is None:
            return page("not found", 404)
        if callable(handler):
            result = handler(request, self.hits[request.path])
            if asyncio.iscoroutine(result):
                result = await result
            return result
        return page(handler)


async def test_every_callback_kind_is_followed() -> None:
    site = Recorder(
        {
            "/": links("/func", "/coro", "/gen", "/agen", "/none", "/single"),
            "/func": "f",
            "/coro": "c",
            "/gen": "g",
            "/agen": "a",
            "/none": "n",
            "/single": "s",
            "/from-single": "x",
        }
    )
    base = site.base
    items: list[dict[str, str]] = []

    class Kinds(Spider):
        name = "kinds"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            cbs = {
                "/func": self.func,
                "/coro": self.coro,
                "/gen": self.gen,
                "/agen": self.agen,
                "/none": self.none,
                "/single": self.single,
            }
            for a in response.css("a::attr(href)").getall():
                yield response.follow(a, callback=cbs[a])

        def func(self, response: Response) -> list[dict[str, str]]:
            return [{"kind": "func"}]

        async def coro(self, response: Response) -> dict[str, str]:
            await asyncio.sleep(0)
            return {"kind": "coro"}

        def gen(self, response: Response) -> Any:
            yield {"kind": "gen"}

        async def agen(self, response: Response) -> Any:
            await asyncio.sleep(0)
            yield {"kind": "agen"}

        def none(self, response: Response) -> None:
            return None

        def single(self, response: Response) -> Request:
            return response.follow("/from-single", callback=self.func)

    class Collect:
        def process_item(self, item: dict[str, str], spider: Spider) -> dict[str, str]:
            items.append(item)
            return item

    stats = await Crawler(Kinds, {**site.fast, "ITEM_PIPELINES": {Collect: 100}}).run()
    assert sorted(i["kind"] for i in items) == ["agen", "coro", "func", "func", "gen"]
    assert stats["item_scraped_count"] == 5
    assert site.hits["/from-single"] == 1
    assert stats["finish_reason"] == "finished"


async def test_start_requests_are_pulled_lazily() -> None:
    site = Recorder({f"/p{i}": "ok" for i in range(100)})
    base = site.base
    pulled = 0

    class Million(Spider):
        name = "million"

        def start_requests(self) -> Any:
            nonlocal pulled
            for i in range(1_000_000):
                pulled += 1
                yield Request(f"{base}/p{i % 100}?n={i}")

        def parse(self, response: Response) -> None:
            return None

    stats = await Crawler(Million, {**site.fast, "CLOSESPIDER_PAGECOUNT": 40}).run()
    assert stats["finish_reason"] == "closespider_pagecount"
    # Only a small buffer beyond what was crawled was ever taken from the generator.
    assert pulled < 40 + 200, pulled


async def test_async_generator_start_requests() -> None:
    site = Recorder({"/a": "a", "/b": "b"})
    base = site.base

    class AsyncStart(Spider):
        name = "astart"

        async def start_requests(self) -> Any:
            for path in ("/a", "/b"):
                await asyncio.sleep(0.01)  # a start that awaits between its requests: the subject
                yield Request(base + path)

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    stats = await Crawler(AsyncStart, site.fast).run()
    assert stats["item_scraped_count"] == 2


async def test_zero_start_urls_finishes_at_once() -> None:
    class Empty(Spider):
        name = "empty"

    stats = await asyncio.wait_for(Crawler(Empty, FAST).run(), timeout=5)
    assert stats["finish_reason"] == "finished"
    assert stats.get("response_received_count", 0) == 0


async def test_late_yields_in_a_deep_chain_keep_the_crawl_alive() -> None:
    site = Recorder({"/step": "step"})
    base = site.base

    class Chain(Spider):
        name = "chain"
        start_urls = [base + "/step?n=0"]

        async def parse(self, response: Response) -> Any:
            n = int(response.url.rsplit("=", 1)[1])
            await asyncio.sleep(0.02)  # the only running task: nothing else is queued
            yield {"n": n}
            if n < 15:
                await asyncio.sleep(0.02)  # and again before the next request
                yield Request(f"{base}/step?n={n + 1}")

    stats = await Crawler(Chain, {**site.fast, "CONCURRENT_REQUESTS": 1}).run()
    assert stats["item_scraped_count"] == 16


async def test_priority_then_fifo() -> None:
    site = Recorder({f"/{n}": "x" for n in "abcdefg"})
    base = site.base

    class Prio(Spider):
        name = "prio"

        def start_requests(self) -> Any:
            # a gate request first so that all the others are queued before dispatch
            yield Request(base + "/a", callback=self.gate)

        def gate(self, response: Response) -> Any:
            for path, prio in (("b", 0), ("c", 5), ("d", 0), ("e", 5), ("f", -1), ("g", 9)):
                yield Request(f"{base}/{path}", priority=prio)

        def parse(self, response: Response) -> None:
            return None

    await Crawler(Prio, {**site.fast, "CONCURRENT_REQUESTS": 1}).run()
    assert site.order == ["/a", "/g", "/c", "/e", "/b", "/d", "/f"]


async def test_duplicates_are_filtered_by_canonical_url() -> None:
    site = Recorder(
        {
            "/": links("/item?a=1&b=2", "/item?b=2&a=1", "/item?a=1&b=2#top", "/other"),
            "/item": "item",
            "/other": links("/", "/item?b=2&a=1"),
        }
    )
    base = site.base

    class Dupes(Spider):
        name = "dupes"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a")

    stats = await Crawler(Dupes, site.fast).run()
    assert site.hits["/item"] == 1
    # "/" is a start URL (dont_filter, as in Scrapy) so the link back to it is fetched once
    assert site.hits["/"] == 2
    assert stats["dupefilter/filtered"] >= 3


async def test_dont_filter_fetches_again() -> None:
    site = Recorder({"/same": "same"})
    base = site.base

    class Again(Spider):
        name = "again"

        def start_requests(self) -> Any:
            for i in range(3):
                yield Request(base + "/same", dont_filter=True, cb_kwargs={"i": i})

        def parse(self, response: Response, i: int) -> Any:
            yield {"i": i}

    stats = await Crawler(Again, site.fast).run()
    assert site.hits["/same"] == 3
    assert stats["item_scraped_count"] == 3


@pytest.mark.parametrize("start", ["start_urls", "dont_filter link"])
async def test_a_dont_filter_copy_of_the_running_request_is_fetched_again(
    start: str,
) -> None:
    """Scrapy's idiom ``yield response.request.replace(dont_filter=True)`` (a page
    that must be fetched once more, e.g. after logging in): the copy must not carry the
    taskid skitter gave the running dont_filter task, or it is merged into it and lost."""
    site = Recorder({"/again": "again", "/": '<a href="/again">x</a>'})
    base = site.base

    class Twice(Spider):
        name = "twice"

        def start_requests(self) -> Any:
            if start == "start_urls":
                yield Request(base + "/again", dont_filter=True)
            else:
                yield Request(base + "/")

        def parse(self, response: Response) -> Any:
            if response.url.endswith("/"):
                yield response.follow("/again", dont_filter=True)
                return
            yield {"n": response.meta.get("n", 0)}
            if not response.meta.get("n"):
                yield response.request.replace(dont_filter=True, meta={"n": 1})

    stats = await Crawler(Twice, site.fast).run()
    assert site.hits["/again"] == 2
    assert stats["item_scraped_count"] == 2


async def test_retry_then_success() -> None:
    def flaky(request: Request, hit: int) -> MockResponse:
        return reply("down", 503) if hit <= 2 else reply("<p>up</p>")

    site = Recorder({"/flaky": flaky})
    base = site.base

    class Flaky(Spider):
        name = "flaky"
        start_urls = [base + "/flaky"]

        def parse(self, response: Response) -> Any:
            yield {"text": response.css("p::text").get(), "retries": response.meta["retry_times"]}

    items: list[Any] = []

    class Keep:
        def process_item(self, item: Any, spider: Spider) -> Any:
            items.append(item)
            return item

    stats = await Crawler(Flaky, {**site.fast, "ITEM_PIPELINES": {Keep: 1}}).run()
    assert site.hits["/flaky"] == 3
    assert items == [{"text": "up", "retries": 2}]
    assert stats["retry/count"] == 2
    assert stats["retry/reason_count/HTTP 503"] == 2


async def test_exhausted_retries_reach_the_errback() -> None:
    site = Recorder({"/down": lambda request, hit: reply("down", 500)})
    base = site.base
    failures: list[BaseException] = []

    class Down(Spider):
        name = "down"

        def start_requests(self) -> Any:
            yield Request(base + "/down", errback=self.failed)

        def parse(self, response: Response) -> None:
            raise AssertionError("a 500 must not reach the callback")

        def failed(self, failure: BaseException) -> Any:
            failures.append(failure)
            yield {"failed": failure.request.url}  # type: ignore[attr-defined]

    stats = await Crawler(Down, {**site.fast, "RETRY_TIMES": 2}).run()
    assert site.hits["/down"] == 3
    assert stats["retry/max_reached"] == 1
    assert len(failures) == 1
    assert failures[0].response.status == 500  # type: ignore[attr-defined]
    assert stats["item_scraped_count"] == 1


async def test_errors_in_callbacks_and_pipelines_do_not_stop_the_crawl() -> None:
    site = Recorder({"/": links(*(f"/p{i}" for i in range(6)))} | {f"/p{i}": "p" for i in range(6)})
    base = site.base

    class Faulty(Spider):
        name = "faulty"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a", callback=self.page)

        def page(self, response: Response) -> Any:
            n = int(response.url[-1])
            if n == 0:
                raise ValueError("broken page")
            if n == 1:
                yield 42  # neither a request nor an item
                return
            yield {"n": n}

    class Picky:
        def process_item(self, item: dict[str, int], spider: Spider) -> dict[str, int]:
            if item["n"] == 2:
                raise DropItem("two is not welcome")
            if item["n"] == 3:
                raise RuntimeError("pipeline bug")
            return item

    stats = await Crawler(Faulty, {**site.fast, "ITEM_PIPELINES": {Picky: 1}}).run()
    assert stats["spider_exceptions/ValueError"] == 1
    assert stats["spider_exceptions/CallbackError/int"] == 1
    assert stats["item_dropped_count"] == 1
    assert stats["item_scraped_count"] == 2  # n = 4, 5
    assert stats["finish_reason"] == "finished"


async def test_invalid_urls_are_counted_and_skipped() -> None:
    site = Recorder({"/": "home", "/ok": "ok"})
    base = site.base

    class BadLinks(Spider):
        name = "badlinks"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield Request("http://[::1/broken")
            yield Request("http://host:notaport/")
            yield Request("ftp://127.0.0.1/file")
            yield Request(base + "/ok", callback=self.ok)

        def ok(self, response: Response) -> Any:
            yield {"ok": True}

    stats = await Crawler(BadLinks, site.fast).run()
    assert stats["item_scraped_count"] == 1
    assert stats["scheduler/invalid_url"] == 2
    assert stats["finish_reason"] == "finished"


async def test_close_spider_from_a_callback() -> None:
    site = Recorder({f"/p{i}": links(f"/p{i + 1}") for i in range(50)})
    base = site.base

    class Closer(Spider):
        name = "closer"
        start_urls = [base + "/p0"]

        def parse(self, response: Response) -> Any:
            if response.url.endswith("/p3"):
                raise CloseSpider("enough")
            yield from response.follow_all(css="a")

    stats = await Crawler(Closer, site.fast).run()
    assert stats["finish_reason"] == "enough"
    assert site.hits["/p10"] == 0


async def test_http_errors_reach_errback_not_callback() -> None:
    site = Recorder({"/": links("/missing", "/gone")})
    base = site.base
    seen: list[int] = []

    class Errors(Spider):
        name = "errors"
        start_urls = [base + "/"]
        handle_httpstatus_list = ()

        def parse(self, response: Response) -> Any:
            for href in ("/missing", "/gone"):
                yield response.follow(href, callback=self.never, errback=self.err)

        def never(self, response: Response) -> None:
            raise AssertionError("404 reached the callback")

        def err(self, failure: Any) -> None:
            seen.append(failure.response.status)

    stats = await Crawler(Errors, site.fast).run()
    assert seen == [404, 404]
    assert stats["downloader/response_status_count/404"] == 2


async def test_many_crawls_in_one_loop_and_side_by_side() -> None:
    site = Recorder({"/": "home"})
    base = site.base

    class One(Spider):
        name = "one"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield {"spider": self.name}

    @dataclasses.dataclass
    class Row:
        spider: str

    class Two(One):
        name = "two"

        def parse(self, response: Response) -> Any:
            yield Row(self.name)

    for _ in range(3):
        stats = await Crawler(One, site.fast).run()
        assert stats["item_scraped_count"] == 1
    both = await run_crawlers([Crawler(One, site.fast), Crawler(Two, site.fast)])
    assert [s["item_scraped_count"] for s in both] == [1, 1]


async def test_monitor_and_failed_task_retry_through_the_crawler() -> None:
    calls: Counter[str] = Counter()

    def flaky(request: Request, hit: int) -> MockResponse:
        calls["flaky"] += 1
        return reply("down", 503) if calls["flaky"] <= 1 else reply("up")

    site = Recorder({"/": links("/ok", "/flaky"), "/ok": "ok", "/flaky": flaky})
    base = site.base

    class Watched(Spider):
        name = "watched"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a", callback=self.page)

        def page(self, response: Response) -> Any:
            yield {"url": response.url}

    crawler = Crawler(Watched, {**site.fast, "RETRY_TIMES": 0})
    await crawler.run()
    monitor = crawler.control.monitor
    assert monitor is not None
    assert monitor.counts() == (2, 1)
    assert [o.reason for o in monitor.failures] == ["HTTP 503"]
    failed = await crawler.control.failed_tasks()
    assert [(t.url, t.reason) for t in failed] == [(base + "/flaky", "HTTP 503")]
    assert await crawler.control.retry_failed(domain="site.test") == 1
    counts = await crawler.control.queue_counts()
    assert (counts.ready, counts.delayed, counts.processing) == (1, 0, 0)


@pytest.mark.virtual_time
async def test_leases_of_slow_tasks_are_renewed_not_reclaimed(serve: Any) -> None:
    async def slow(request: web.Request, hit: int) -> web.Response:
        await asyncio.sleep(2.5)  # virtual
        return page("slow")

    site = Recorder({"/slow": slow})
    base = await serve(site.app)

    class Slow(Spider):
        name = "slow"
        start_urls = [base + "/slow"]

        def parse(self, response: Response) -> Any:
            yield {"done": True}

    # a lease of 1.5 s on a download of 2.5 s: only renewal keeps it from being handed
    # out again (which would fetch the page twice)
    # (on virtual time: on the wall clock a loaded machine could delay the renewal)
    stats = await Crawler(Slow, {**FAST, "PROCESSING_TIMEOUT": 1.5}, clock=virtual_clock()).run()
    assert site.hits["/slow"] == 1
    assert stats.get("scheduler/leases_reclaimed", 0) == 0
    assert stats["item_scraped_count"] == 1
