"""skitter.testing.MockTransport: a handler answers through the network's response path
(limits, decoding, data loss, the Response class), and DOWNLOAD_TRANSPORT takes it (and
any transport factory) for a whole crawl."""

from __future__ import annotations

import asyncio
import gzip
import logging
from typing import Any

import pytest

from skitter import Crawler, Request, Response, Spider
from skitter.downloader import Downloader
from skitter.exceptions import (
    ConfigError,
    ConnectError,
    ConnectionLost,
    DownloadTimeout,
    ResponseTooLarge,
)
from skitter.http import HtmlResponse, JsonResponse, TextResponse
from skitter.settings import Settings
from skitter.signals import headers_received
from skitter.testing import DictStats, MockResponse, MockTransport, TestCrawler


async def fetch(handler: Any, url: str = "http://example.com/", **settings: Any) -> Response:
    async with MockTransport(handler, Settings(settings)) as transport:
        return await transport.fetch(Request(url))


@pytest.mark.parametrize(
    ("answer", "cls", "status", "body"),
    [
        ("<p>hi</p>", HtmlResponse, 200, b"<p>hi</p>"),
        (b"\x00\x01", Response, 200, b"\x00\x01"),
        (404, TextResponse, 404, b""),  # an empty body reads as text, as from a server
        (MockResponse.json({"a": 1}), JsonResponse, 200, b'{"a": 1}'),
        (MockResponse.text("plain", 503), TextResponse, 503, b"plain"),
    ],
)
async def test_an_answer_is_built_as_a_network_response(
    answer: Any, cls: type[Response], status: int, body: bytes
) -> None:
    response = await fetch(lambda request: answer)
    assert type(response) is cls
    assert (response.status, response.body) == (status, body)
    assert response.protocol == "HTTP/1.1"


async def test_an_async_handler_sees_the_request_as_sent() -> None:
    seen: list[Request] = []

    async def handler(request: Request) -> str:
        seen.append(request)
        await asyncio.sleep(0)
        return "ok"

    response = await fetch(handler, "http://example.com/a?b=1")
    assert [r.url for r in seen] == ["http://example.com/a?b=1"]
    assert response.text == "ok"


async def test_a_compressed_body_is_decoded_by_the_crawls_decoder() -> None:
    answer = MockResponse(
        200, {"Content-Type": "text/html", "Content-Encoding": "gzip"}, gzip.compress(b"<b>z</b>")
    )
    response = await fetch(lambda request: answer)
    assert response.body == b"<b>z</b>"
    assert "Content-Encoding" not in response.headers
    assert response.flags == ["decoded:gzip"]


async def test_download_maxsize_refuses_a_long_content_length() -> None:
    with pytest.raises(ResponseTooLarge, match="Content-Length 11"):
        await fetch(lambda request: b"x" * 11, DOWNLOAD_MAXSIZE=10)


async def test_a_gzip_bomb_is_cut_at_download_maxsize() -> None:
    bomb = gzip.compress(b"\0" * 100_000)
    answer = MockResponse(200, {"Content-Encoding": "gzip"}, bomb)
    with pytest.raises(ResponseTooLarge, match="decoded body"):
        await fetch(lambda request: answer, DOWNLOAD_MAXSIZE=1000)


async def test_a_body_shorter_than_its_content_length_is_data_loss() -> None:
    cut = MockResponse(200, {"Content-Length": "10"}, b"abc")
    with pytest.raises(ConnectionLost, match="truncated"):
        await fetch(lambda request: cut)
    response = await fetch(lambda request: cut, DOWNLOAD_FAIL_ON_DATALOSS=False)
    assert (response.body, response.flags) == (b"abc", ["dataloss"])


async def test_a_handler_that_never_answers_is_a_download_timeout() -> None:
    async def never(request: Request) -> str:
        await asyncio.Event().wait()
        return "unreachable"

    with pytest.raises(DownloadTimeout):
        await fetch(never, DOWNLOAD_TIMEOUT=0.01)


async def test_a_network_error_raised_by_the_handler_is_counted() -> None:
    def refuse(request: Request) -> str:
        raise ConnectError("refused", request=request)

    stats = DictStats()
    async with MockTransport(refuse, Settings(), stats) as transport:
        with pytest.raises(ConnectError):
            await transport.fetch(Request("http://example.com/"))
    assert stats["downloader/exception_type_count/ConnectError"] == 1


async def test_a_bug_in_the_handler_goes_on_as_it_is() -> None:
    with pytest.raises(KeyError):
        await fetch(lambda request: {}["missing"])
    with pytest.raises(TypeError, match="expected a MockResponse"):
        await fetch(lambda request: ["not", "an", "answer"])


async def test_as_download_transport_it_is_the_crawls_transport() -> None:
    cookies: list[str | None] = []

    def site(request: Request) -> Any:
        path = request.parsed_url.path
        cookies.append(request.headers.text("Cookie"))
        if path == "/":
            return MockResponse.html(
                '<a href="/next">n</a>', headers=[("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]
            )
        if path == "/next":
            return MockResponse.redirect("/end")
        return "<p>end</p>"

    items: list[str] = []

    class Walk(Spider):
        name = "walk"
        start_urls = ["http://example.com/"]

        def parse(self, response: Response) -> Any:
            items.append(response.url)
            yield from response.follow_all(css="a")

    transport = MockTransport(site)
    stats = await Crawler(Walk, {"DOWNLOAD_TRANSPORT": transport}).run()
    assert items == ["http://example.com/", "http://example.com/end"]
    assert [r.parsed_url.path for r in transport.requests] == ["/", "/next", "/end"]
    assert transport.requests[0].headers["User-Agent"] == b"skitter/0.1"  # the middlewares'
    assert cookies[1:] == ["a=1; b=2", "a=1; b=2"]
    assert stats["downloader/response_status_count/302"] == 1
    assert stats["finish_reason"] == "finished"


async def test_the_crawls_signals_and_limits_reach_it(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[int] = []

    class Listen(Spider):
        name = "listen"
        start_urls = ["http://example.com/"]
        custom_settings = {"DOWNLOAD_WARNSIZE": 5}

        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Listen:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.on_headers, headers_received)
            return spider

        def on_headers(self, body_length: int, **kwargs: Any) -> None:
            heard.append(body_length)

        def parse(self, response: Response) -> None:
            return None

    with caplog.at_level(logging.WARNING, "skitter.downloader"):
        await Crawler(Listen, {"DOWNLOAD_TRANSPORT": MockTransport(lambda r: "123456")}).run()
    assert heard == [6]
    assert "larger than DOWNLOAD_WARNSIZE (5 bytes)" in caplog.text


async def test_meta_transport_names_it() -> None:
    transport = MockTransport(lambda request: "ok")
    crawler = TestCrawler(Settings({"DOWNLOAD_TRANSPORT": transport}))
    async with Downloader(crawler, None) as downloader:
        assert downloader.transport_name == "mock"
        response = await downloader.fetch(Request("http://a.test/", meta={"transport": "mock"}))
    assert isinstance(response, Response) and response.text == "ok"
    assert len(transport.requests) == 1


class Named:
    """A transport factory of the user's own, found by its dotted path."""

    name = "named"

    def __new__(cls, settings: Settings, stats: Any, **parts: Any) -> Any:  # type: ignore[misc]
        return MockTransport(lambda request: "named")(settings, stats, **parts)


async def test_a_dotted_path_to_a_factory_is_loaded() -> None:
    crawler = TestCrawler(Settings({"DOWNLOAD_TRANSPORT": f"{__name__}.Named"}))
    async with Downloader(crawler, None) as downloader:
        response = await downloader.fetch(Request("http://a.test/"))
    assert isinstance(response, Response) and response.text == "named"


class Browserish(MockTransport):
    name = "browser"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("carrier-pigeon", "must be one of aiohttp, httpx, curl, browser"),
        (42, "or a transport factory"),
        ("no.such.module", "cannot import"),
        (lambda *args, **kwargs: object(), "is not a Transport"),
        (lambda *args, **kwargs: Browserish(str), "its transport's name 'browser'"),
    ],
)
def test_a_download_transport_that_is_neither_a_name_nor_a_factory_is_refused(
    value: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Downloader(TestCrawler(Settings({"DOWNLOAD_TRANSPORT": value})), None)
