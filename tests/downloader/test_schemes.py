"""``data:`` and ``file:`` requests (issue 16): answered by the Downloader without the
network, and refused by the scope check unless the spider's ``allowed_schemes`` (or
the request's ``meta["allow_offsite"]``) lets them in."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import (
    ConfigError,
    CrawlFailed,
    IgnoreRequest,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import HtmlResponse, TextResponse

from .conftest import MakeDownloader


class Local:
    allowed_schemes = frozenset({"data", "file"})


class LocalInScope:
    allowed_domains = ("127.0.0.1",)
    allowed_schemes = ("data", "file")


class Network:
    pass


class NetworkInScope:
    allowed_domains = ("127.0.0.1",)


async def get(make_downloader: MakeDownloader, url: str, spider: Any = None, **kw: Any) -> Any:
    downloader = await make_downloader(kw.pop("settings", None), spider=spider or Local())
    result = await downloader.fetch(Request(url, **kw))
    assert isinstance(result, Response)
    return result, downloader.crawler.stats.values


# -- data: -------------------------------------------------------------------------------------
async def test_a_data_uri_is_its_body_with_scrapys_defaults(
    make_downloader: MakeDownloader,
) -> None:
    response, stats = await get(make_downloader, "data:,A%20brief%20note")
    assert (response.status, response.body, response.text) == (200, b"A brief note", "A brief note")
    assert response.encoding == "US-ASCII"  # RFC 2397's default
    assert type(response) is TextResponse
    assert not response.headers
    assert response.meta["download_latency"] >= 0
    assert stats["downloader/request_count"] == stats["downloader/response_count"] == 1
    assert stats["downloader/response_status_count/200"] == 1


@pytest.mark.parametrize(
    ("url", "text", "encoding"),
    [
        ("data:text/plain;charset=iso-8859-7,%be%d3%be", "\u038e\u03a3\u038e", "iso-8859-7"),
        ("data:;charset=iso-8859-7,%be%d3%be", "\u038e\u03a3\u038e", "iso-8859-7"),
        ("data:text/html;charset=utf-8,%CE%8E<b>x</b>", "\u038e<b>x</b>", "utf-8"),
        ("data:text/plain;charset=no-such-charset,caf%C3%A9", "caf\u00e9", "utf-8"),
    ],
)
async def test_a_data_uris_charset_is_the_responses_encoding(
    url: str, text: str, encoding: str, make_downloader: MakeDownloader
) -> None:
    response, _ = await get(make_downloader, url)
    assert response.text == text
    assert response.encoding == encoding


async def test_base64_data_is_decoded(make_downloader: MakeDownloader) -> None:
    response, _ = await get(make_downloader, "data:image/png;base64,iVBORw0KGgo=")
    assert response.body == b"\x89PNG\r\n\x1a\n"
    assert not isinstance(response, TextResponse)
    response, _ = await get(make_downloader, "data:text/plain;base64,SGVsbG8sIHdvcmxkLg%3D%3D")
    assert response.text == "Hello, world."


async def test_an_html_data_uri_parses_and_follows(make_downloader: MakeDownloader) -> None:
    response, _ = await get(
        make_downloader, "data:text/html,<a href='http://127.0.0.1:1/next'>n</a><p>hi</p>"
    )
    assert type(response) is HtmlResponse
    assert response.css("p::text").get() == "hi"
    assert [r.url for r in response.follow_all(css="a")] == ["http://127.0.0.1:1/next"]


async def test_a_broken_data_uri_is_an_invalid_url(make_downloader: MakeDownloader) -> None:
    with pytest.raises(InvalidURL, match="not a data URI"):
        await get(make_downloader, "data:")


# -- file: -------------------------------------------------------------------------------------
async def test_a_file_uri_is_the_files_bytes(
    tmp_path: Path, make_downloader: MakeDownloader
) -> None:
    page = tmp_path / "page one.html"
    page.write_bytes(b"<html><body><h1>local</h1></body></html>")
    response, stats = await get(make_downloader, page.as_uri())
    assert response.status == 200
    assert type(response) is HtmlResponse  # by the file name, as Scrapy
    assert response.css("h1::text").get() == "local"
    assert stats["downloader/response_bytes"] == page.stat().st_size


async def test_a_missing_file_or_a_directory_fails_without_retry(
    tmp_path: Path, make_downloader: MakeDownloader
) -> None:
    with pytest.raises(RequestError, match="No such file") as caught:
        await get(make_downloader, (tmp_path / "absent.html").as_uri())
    assert type(caught.value) is RequestError  # not a TransportError: never retried
    with pytest.raises(RequestError, match="directory"):
        await get(make_downloader, tmp_path.as_uri())


async def test_a_file_over_download_maxsize_is_not_read(
    tmp_path: Path, make_downloader: MakeDownloader
) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 4096)
    with pytest.raises(ResponseTooLarge, match="4096 bytes"):
        await get(make_downloader, big.as_uri(), settings={"DOWNLOAD_MAXSIZE": 1000})
    response, _ = await get(make_downloader, big.as_uri(), meta={"download_maxsize": 0})
    assert len(response.body) == 4096


# -- the scope check -----------------------------------------------------------------------------
@pytest.mark.parametrize("spider", [Network(), NetworkInScope()], ids=["any-host", "restricted"])
@pytest.mark.parametrize("scheme", ["data", "file"])
async def test_local_schemes_are_refused_unless_the_spider_allows_them(
    spider: Any, scheme: str, tmp_path: Path, make_downloader: MakeDownloader
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    url = secret.as_uri() if scheme == "file" else "data:,do%20not%20read"
    downloader = await make_downloader(spider=spider)
    with pytest.raises(IgnoreRequest, match=f"offsite: {scheme}: URLs are refused"):
        await downloader.fetch(Request(url))
    stats = downloader.crawler.stats.values
    assert stats["offsite/filtered"] == 1
    assert "downloader/request_count" not in stats  # nothing was read
    result = await downloader.fetch(Request(url, meta={"allow_offsite": True}))
    assert isinstance(result, Response) and result.body == b"do not read"


async def test_allowed_schemes_do_not_widen_the_hosts(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader(spider=LocalInScope())
    result = await downloader.fetch(Request("data:,ok"))
    assert isinstance(result, Response) and result.body == b"ok"
    with pytest.raises(IgnoreRequest, match="outside allowed_domains"):
        await downloader.fetch(Request("http://elsewhere.invalid/"))


def test_an_unknown_allowed_scheme_is_refused() -> None:
    class Ftp(Spider):
        name = "ftp"
        allowed_schemes = ("ftp",)

    with pytest.raises(ConfigError, match=r"allowed_schemes: skitter downloads .* not ftp"):
        Crawler(Ftp).build()


async def test_a_redirect_never_leads_to_a_local_scheme(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    async def to_file(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "file:///etc/passwd"})

    app = web.Application()
    app.router.add_get("/", to_file)
    base = await serve(app)
    downloader = await make_downloader(spider=Local())
    result = await downloader.fetch(Request(base + "/"))
    assert isinstance(result, Response) and result.status == 302  # handed back, not followed


# -- end to end ------------------------------------------------------------------------------------
async def test_a_crawl_reads_data_and_file_urls_and_follows_to_http(
    tmp_path: Path, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><h1>remote</h1></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/remote", page)
    base = await serve(app)
    local = tmp_path / "index.html"
    local.write_text(f"<html><h1>from disk</h1><a href='{base}/remote'>r</a></html>")

    class Mixed(Spider):
        name = "mixed"
        allowed_schemes = frozenset({"data", "file"})
        start_urls = ("data:text/html,<h1>inline</h1>", local.as_uri())

        def parse(self, response: Any) -> Any:
            yield {"h1": response.css("h1::text").get()}
            yield from response.follow_all(css="a")

    stats = await Crawler(Mixed, {"ROBOTSTXT_OBEY": True}).run()
    assert stats["item_scraped_count"] == 3
    assert stats["downloader/request_count"] == 4  # and robots.txt of the http server only

    class Closed(Mixed):
        name = "closed"
        allowed_schemes = frozenset()

    crawler = Crawler(Closed)
    with caplog.at_level(logging.INFO), pytest.raises(CrawlFailed) as failed:
        await crawler.run()  # not one of its start requests was fetched
    stats = failed.value.stats
    assert stats.get("item_scraped_count", 0) == 0
    assert stats["offsite/filtered"] == 2
    assert "not in allowed_schemes" in caplog.text
