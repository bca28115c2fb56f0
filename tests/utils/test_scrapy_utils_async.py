"""Scrapy's asyncio/Deferred helper modules (``scrapy.utils.defer``, ``.asyncgen``,
``.asyncio``, ``.reactor``), middlewares' sync hooks and the stats' spider hooks, as code
written for Scrapy calls them."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from skitter.engine import Stats
from skitter.http import Request, Response
from skitter.settings import Settings
from skitter.spidermiddlewares.referer import RefererMiddleware
from skitter.utils import asyncgen, defer, reactor
from skitter.utils import asyncio as scrapy_asyncio


class FakeDeferred:
    """Just the two methods by which a Twisted Deferred is recognised."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def addCallbacks(self, *args: Any) -> None:
        raise AssertionError("not used")

    def asFuture(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
        future = loop.create_future()
        future.set_result(self.value)
        return future


async def test_asyncgen_round_trip() -> None:
    assert await asyncgen.collect_asyncgen(asyncgen.as_async_generator([1, 2])) == [1, 2]
    again = asyncgen.as_async_generator(asyncgen.as_async_generator(iter([3])))
    assert await asyncgen.collect_asyncgen(again) == [3]


async def test_call_later_fires_and_cancels() -> None:
    fired = asyncio.Event()
    scrapy_asyncio.call_later(0, fired.set)
    await fired.wait()
    never: list[int] = []
    timer = scrapy_asyncio.call_later(0, never.append, 1)
    timer.cancel()
    timer.cancel()  # a second cancel is harmless
    await scrapy_asyncio.sleep(0)
    await scrapy_asyncio.sleep(0)
    assert never == []
    assert await scrapy_asyncio.run_in_thread(sum, [1, 2]) == 3
    assert scrapy_asyncio.is_asyncio_available()


async def test_deferred_bridges() -> None:
    assert await defer.maybe_deferred_to_future(FakeDeferred(5)) == 5
    assert await defer.deferred_to_future(FakeDeferred(6)) == 6
    assert await defer.ensure_awaitable(7) == 7
    assert await defer.ensure_awaitable(FakeDeferred(8)) == 8
    assert defer.deferred_from_coro(9) == 9


async def test_deferred_from_coro_without_twisted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "twisted.internet.defer", None)

    async def coro() -> int:
        return 1

    with pytest.raises(RuntimeError, match="Twisted is not installed"):
        defer.deferred_from_coro(coro())


def test_no_reactor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "twisted.internet.reactor", raising=False)
    assert reactor.is_reactor_installed() is False
    with pytest.raises(RuntimeError, match="no Twisted reactor"):
        reactor.is_asyncio_reactor_installed()


def test_referer_middleware_from_settings_with_a_sync_output() -> None:
    mw = RefererMiddleware(Settings({"REFERRER_POLICY": "same-origin"}))
    assert mw.default_policy.name == "same-origin"
    response = Response("http://a.example/page")
    out = list(mw.process_spider_output(response, [Request("http://a.example/next")]))
    assert out[0].headers.get("Referer") == b"http://a.example/page"
    other = Request("http://b.example/")
    assert next(iter(mw.process_spider_output(response, [other]))).headers.get("Referer") is None
    assert RefererMiddleware().default_policy.name == "scrapy-default"


def test_stats_spider_hooks_keep_the_values() -> None:
    stats = Stats()
    stats.open_spider()
    stats.inc_value("x")
    stats.close_spider(reason="finished")
    assert stats.get_value("x") == 1


async def test_test_helpers() -> None:
    from skitter.utils.test import get_from_asyncio_queue, get_reactor_settings

    assert await get_from_asyncio_queue("x") == "x"
    assert get_reactor_settings() == {}


def test_httperror_middleware_asks_the_crawls_spider_when_none_is_passed() -> None:
    from skitter.exceptions import HttpError
    from skitter.spidermiddlewares.httperror import HttpErrorMiddleware
    from skitter.utils.test import get_crawler

    crawler = get_crawler()
    crawler.spider = crawler._create_spider()
    mw = HttpErrorMiddleware.from_crawler(crawler)
    response = Response("http://a.example/", status=404, request=Request("http://a.example/"))
    with pytest.raises(HttpError):
        mw.process_spider_input(response)
    crawler.spider.handle_httpstatus_list = [404]
    mw.process_spider_input(response)


async def test_start_spider_middleware_marks_start_requests_only() -> None:
    from skitter.spidermiddlewares.start import StartSpiderMiddleware

    mw = StartSpiderMiddleware()

    async def start() -> Any:
        yield Request("http://a.example/1")
        yield Request("http://a.example/2", meta={"is_start_request": False})

    marks = [r.meta["is_start_request"] async for r in mw.process_start(start())]
    assert marks == [True, False]
    found = Request("http://a.example/3")
    assert list(mw.process_spider_output(Response("http://a.example/"), [found])) == [found]
    assert "is_start_request" not in found.meta


def test_meta_copy_detection_warns_once_and_honours_skip_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from skitter.spidermiddlewares.metacopy import MetaCopyDetectionMiddleware
    from skitter.utils.test import get_crawler

    page = Response("http://a.example/", request=Request("http://a.example/"))
    mw = MetaCopyDetectionMiddleware.from_crawler(get_crawler())
    copied = [Request(f"http://a.example/{i}", meta={"retry_times": 2, "k": 1}) for i in (1, 2)]
    with caplog.at_level("WARNING"):
        assert list(mw.process_spider_output(page, copied)) == copied
        list(mw.process_spider_output(None, copied))  # start requests: not looked at
    assert len(caplog.records) == 1
    assert "retry_times" in caplog.text
    assert "http://a.example/1" in caplog.text
    caplog.clear()
    crawler = get_crawler(settings_dict={"META_COPY_WARN_SKIP_KEYS": ["retry_times"]})
    quiet = MetaCopyDetectionMiddleware.from_crawler(crawler)
    with caplog.at_level("WARNING"):
        list(quiet.process_spider_output(page, copied))
    assert not caplog.records
