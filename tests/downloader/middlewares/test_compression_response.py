"""HttpCompressionMiddleware's Scrapy side: a body that reaches it still encoded.

The transport decodes what it knows as the body arrives; a stack with a coding it does
not know (``foo, gzip``) it leaves whole, and the middleware then undoes the outer codings
it knows, as Scrapy's does. Bodies built by hand go through ``process_response`` alone.
"""

from __future__ import annotations

import gzip
import logging
import zlib

import pytest
from aiohttp import web

from skitter.downloader import HttpCompressionMiddleware
from skitter.downloadermiddlewares.downloadtimeout import DownloadTimeoutMiddleware
from skitter.downloadermiddlewares.stats import get_header_size
from skitter.exceptions import IgnoreRequest
from skitter.http import HtmlResponse, Request, Response
from skitter.utils.gz import gunzip
from skitter.utils.test import get_crawler
from skitter.utils.wiring import DecompressionMaxSizeExceeded

from ..conftest import MakeDownloader

PAGE = b"<html><body>" + b"skitter " * 2000 + b"</body></html>"


async def foo_then_gzip(request: web.Request) -> web.Response:
    headers = {"Content-Encoding": "foo, gzip", "Content-Type": "text/html"}
    return web.Response(body=gzip.compress(PAGE), headers=headers)


async def test_a_stack_the_transport_leaves_whole_is_undone_down_to_the_unknown_coding(
    serve, make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    app = web.Application()
    app.router.add_get("/", foo_then_gzip)
    base = await serve(app)
    downloader = await make_downloader()
    with caplog.at_level(logging.WARNING):
        response = await downloader.fetch(Request(f"{base}/"))
    assert isinstance(response, Response)
    assert response.body == PAGE
    assert response.headers.getlist("Content-Encoding") == [b"foo"]
    assert "from unsupported encoding(s) 'foo'" in caplog.text


def middleware(settings: dict[str, object] | None = None) -> HttpCompressionMiddleware:
    return HttpCompressionMiddleware.from_crawler(get_crawler(settings_dict=settings))


def encoded(body: bytes, coding: str, url: str = "http://127.0.0.1/") -> Response:
    return Response(url, body=body, headers={"Content-Encoding": coding})


def test_a_decoded_html_body_becomes_an_html_response_with_its_own_encoding() -> None:
    page = b'<html><head><meta charset="gb2312"></head></html>'
    response = encoded(gzip.compress(page), "gzip", "http://127.0.0.1/page.html")
    out = middleware().process_response(Request(response.url), response)
    assert isinstance(out, HtmlResponse)
    assert out.body == page
    assert out.encoding == "gb18030"
    assert "Content-Encoding" not in out.headers
    assert response.headers["Content-Encoding"] == b"gzip"  # the original is left alone


def test_a_bomb_past_download_maxsize_is_ignored_with_the_cause() -> None:
    response = encoded(zlib.compress(b"\0" * 5_000_000), "deflate")
    with pytest.raises(IgnoreRequest, match="exceeded DOWNLOAD_MAXSIZE") as info:
        middleware({"DOWNLOAD_MAXSIZE": 1_000_000}).process_response(
            Request(response.url), response
        )
    cause = info.value.__cause__
    assert isinstance(cause, DecompressionMaxSizeExceeded)
    assert 1_000_000 < cause.decompressed_size < 1_100_000


def test_a_truncated_gzip_body_gives_what_it_held() -> None:
    data = gzip.compress(PAGE)
    held = gunzip(data[: len(data) // 2])
    assert held
    assert PAGE.startswith(held)
    with pytest.raises(OSError, match="Not a gzipped file"):
        gunzip(b"not gzip")


def test_get_header_size_counts_name_value_lines() -> None:
    assert get_header_size({"A": ["bc", "d"]}) == len(b"A: bc") + len(b"A: d")
    assert get_header_size({"A": ["b"], "CD": ["e"]}) == len(b"A: b\r\nCD: e")


def test_download_timeout_middleware_sets_the_setting_into_meta() -> None:
    crawler = get_crawler(settings_dict={"DOWNLOAD_TIMEOUT": 7})
    mw = DownloadTimeoutMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1/")
    assert mw.process_request(request) is None
    assert request.meta["download_timeout"] == 7
