"""Errbacks get a Failure, as Scrapy's do; get_retry_request, dont_retry and
max_retry_times; in real crawls against local servers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter._failure import Failure
from skitter.downloadermiddlewares.retry import get_retry_request
from skitter.exceptions import (
    ConnectError,
    DNSLookupError,
    DownloadTimeout,
    TCPTimedOutError,
)
from skitter.spidermiddlewares.httperror import HttpError
from skitter.testing import refused_port, virtual_clock

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4, "RETRY_TIMES": 0}


def site(hits: dict[str, int]) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        if request.path == "/slow":
            await asyncio.sleep(2)  # a real server's slow page, beyond the test's DOWNLOAD_TIMEOUT
        if request.path == "/missing":
            return web.Response(status=404, text="gone")
        if request.path == "/busy":
            return web.Response(status=503, text="busy")
        if request.path == "/captcha" and hits[request.path] < 3:
            return web.Response(text="<p>captcha</p>", content_type="text/html")
        return web.Response(text="<p>ok</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


async def test_errbacks_check_failures_the_way_scrapy_documents(serve: Any) -> None:
    hits: dict[str, int] = {}
    base = await serve(site(hits))
    refused = f"http://127.0.0.1:{refused_port()}/"
    seen: list[tuple[str, str, Any]] = []

    class Checks(Spider):
        """The errback of Scrapy's "Using errbacks to catch exceptions" example."""

        name = "checks"

        def start_requests(self) -> Any:
            for url in (base + "/missing", base + "/slow", refused):
                yield Request(url, callback=self.parse, errback=self.errback_httpbin)

        def parse(self, response: Response) -> Any:
            raise AssertionError("no request succeeds here")

        def errback_httpbin(self, failure: Failure) -> Any:
            if failure.check(HttpError):
                response = failure.value.response  # type: ignore[attr-defined]
                seen.append(("HttpError", response.url, response.status))
            elif failure.check(DNSLookupError):
                seen.append(("DNSLookupError", failure.request.url, None))
            elif failure.check(TimeoutError, TCPTimedOutError):
                seen.append(("TimeoutError", failure.request.url, failure.type))
            elif failure.check(ConnectError):
                seen.append(("ConnectError", failure.request.url, failure.getErrorMessage()))
            yield {"failed": failure.request.url}

    crawler = Crawler(Checks, {**FAST, "DOWNLOAD_TIMEOUT": 0.3})
    stats = await crawler.run()
    assert sorted(seen, key=lambda s: s[0]) == [
        ("ConnectError", refused, seen[[s[0] for s in seen].index("ConnectError")][2]),
        ("HttpError", base + "/missing", 404),
        ("TimeoutError", base + "/slow", DownloadTimeout),
    ]
    assert "cannot connect" in next(s[2] for s in seen if s[0] == "ConnectError")
    assert stats["item_scraped_count"] == 3


def test_the_failure_surface() -> None:
    request = Request("http://127.0.0.1/x")
    exc = DownloadTimeout("took too long", request=request)
    try:
        raise exc
    except DownloadTimeout as raised:
        failure = Failure(raised)
    assert failure.request is request
    assert failure.value is exc and failure.type is DownloadTimeout
    traceback = failure.getTraceback()
    assert "raise exc" in traceback and "DownloadTimeout: took too long" in traceback
    assert failure.check(HttpError) is None
    assert failure.check(HttpError, TimeoutError) is TimeoutError
    assert failure.check("skitter.exceptions.TransportError") == "skitter.exceptions.TransportError"
    assert failure.trap(DownloadTimeout) is DownloadTimeout
    with pytest.raises(DownloadTimeout):
        failure.trap(HttpError)
    assert failure.getErrorMessage() == "took too long"
    assert "took too long" in str(failure) and "DownloadTimeout" in repr(failure)
    # skitter's own errbacks read the exception's attributes through the failure
    assert failure.request.url == "http://127.0.0.1/x"
    with pytest.raises(AttributeError):
        failure.no_such_attribute  # noqa: B018


async def test_get_retry_request_retries_from_a_callback_up_to_max_retry_times(
    serve: Any,
) -> None:
    hits: dict[str, int] = {}
    base = await serve(site(hits))
    got: list[int] = []

    class Captcha(Spider):
        name = "captcha"

        def start_requests(self) -> Any:
            yield Request(base + "/captcha")
            yield Request(base + "/ok", callback=self.always_bad, meta={"max_retry_times": 1})

        def parse(self, response: Response) -> Any:
            if response.css("p::text").get() == "captcha":
                retry = get_retry_request(response.request, spider=self, reason="captcha")
                if retry is not None:
                    yield retry
                return
            got.append(response.meta.get("retry_times", 0))
            yield {"url": response.url}

        def always_bad(self, response: Response) -> Any:
            retry = get_retry_request(
                response.request, spider=self, reason=ValueError("empty"), priority_adjust=-5
            )
            if retry is not None:
                assert retry.priority == response.request.priority - 5
                assert retry.dont_filter
                yield retry

    stats = await Crawler(Captcha, {**FAST, "RETRY_TIMES": 5}).run()
    assert hits["/captcha"] == 3
    assert got == [2]
    assert hits["/ok"] == 2  # the first try and one retry: meta max_retry_times=1
    assert stats["retry/count"] == 3
    assert stats["retry/reason_count/captcha"] == 2
    assert stats["retry/reason_count/builtins.ValueError"] == 1
    assert stats["retry/max_reached"] == 1


def test_get_retry_request_reads_retry_times_from_the_settings() -> None:
    class Quiet(Spider):
        name = "quiet"

    crawler = Crawler(Quiet, {"RETRY_TIMES": 1})
    crawler.build()
    spider = crawler.spider
    first = get_retry_request(Request("http://127.0.0.1/a"), spider=spider, stats_base_key="mine")
    assert first is not None and first.meta["retry_times"] == 1
    assert get_retry_request(first, spider=spider, stats_base_key="mine") is None
    assert crawler.stats.get("mine/count") == 1
    assert crawler.stats.get("mine/max_reached") == 1
    third = get_retry_request(first, spider=spider, max_retry_times=2, reason=lambda: "why")
    assert third is not None and third.meta["retry_times"] == 2


@pytest.mark.virtual_time  # the retries' back-off: seconds of it, on virtual time
async def test_meta_max_retry_times_and_dont_retry_bound_the_schedulers_retries(
    serve: Any,
) -> None:
    hits: dict[str, int] = {}
    base = await serve(site(hits))

    class Busy(Spider):
        name = "busy"

        def start_requests(self) -> Any:
            yield Request(base + "/busy", meta={"max_retry_times": 1}, errback=self.failed)
            yield Request(base + "/busy?no", meta={"dont_retry": True}, errback=self.failed)
            yield Request(base + "/busy?default", errback=self.failed)

        def failed(self, failure: Failure) -> Any:
            yield {"status": failure.value.response.status}  # type: ignore[attr-defined]

    stats = await Crawler(Busy, {**FAST, "RETRY_TIMES": 3}, clock=virtual_clock()).run()
    assert hits["/busy"] == 2 + 1 + 4  # max_retry_times=1, dont_retry, RETRY_TIMES=3
    assert stats["item_scraped_count"] == 3


def test_a_name_that_does_not_resolve_is_a_dns_lookup_error() -> None:
    from aiohttp import ClientConnectorDNSError
    from aiohttp.client_reqrep import ConnectionKey

    from skitter.downloader._aiohttp import _translate

    request = Request("http://no-such-host.invalid/")
    key = ConnectionKey("no-such-host.invalid", 80, False, True, None, None, None, None)
    error = ClientConnectorDNSError(key, OSError(-2, "Name or service not known"))
    translated = _translate(error, request, None)
    assert isinstance(translated, DNSLookupError) and isinstance(translated, ConnectError)
    assert Failure(translated).check(DNSLookupError) is DNSLookupError
    assert translated.request is request
