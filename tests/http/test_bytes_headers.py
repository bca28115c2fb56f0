"""Request and response headers are Scrapy's ``Headers`` (bytes values) end to end: what a
Scrapy spider or middleware reads and writes, and a response's built only when read."""

from __future__ import annotations

from typing import Any

from multidict import CIMultiDict

from skitter import Spider
from skitter.crawler import Crawler
from skitter.http import Headers, Request, Response
from skitter.testing import MockResponse, MockTransport


async def test_a_scrapy_spider_and_middleware_read_and_write_bytes_headers() -> None:
    seen: dict[str, Any] = {}

    class SetsToken:
        def process_request(self, request: Request, spider: Any) -> None:
            request.headers[b"X-Token"] = b"t-1"  # as a Scrapy middleware writes it
            seen["user_agent"] = request.headers.get("User-Agent")

    def site(request: Request) -> MockResponse:
        seen["sent_token"] = request.headers.text("X-Token")
        return MockResponse.html(
            "<p>hi</p>", headers=[("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Empty", "")]
        )

    class Reads(Spider):
        name = "reads"
        start_urls = ["http://example.com/"]

        def parse(self, response: Response) -> Any:
            seen["content_type"] = response.headers.get("Content-Type").decode()  # type: ignore[union-attr]
            seen["cookies"] = response.headers.getlist("Set-Cookie")
            seen["empty"] = response.headers.get("X-Empty")
            seen["unicode"] = response.headers.to_unicode_dict()["set-cookie"]
            yield {"ok": True}

    settings = {
        "DOWNLOAD_TRANSPORT": MockTransport(site),
        "DOWNLOADER_MIDDLEWARES": {SetsToken: 543},
    }
    stats = await Crawler(Reads, settings).run()
    assert stats["item_scraped_count"] == 1
    assert seen == {
        "user_agent": b"skitter/0.1",
        "sent_token": "t-1",
        "content_type": "text/html; charset=utf-8",
        "cookies": [b"a=1", b"b=2"],
        "empty": b"",
        "unicode": "a=1,b=2",
    }


def test_a_response_builds_its_headers_only_when_they_are_read() -> None:
    raw = CIMultiDict([("Content-Type", "text/html; charset=latin-1"), ("Set-Cookie", "a=1")])
    raw.add("Set-Cookie", "b=2")
    response = Response("http://e.com/", headers=raw, body=b"caf\xe9")
    assert response.text == "café"  # the charset came from the transport's headers
    assert response.header("set-cookie") == "b=2"  # the last, as Headers gives it
    assert response.header_list("Set-Cookie") == ["a=1", "b=2"]
    assert response.header("Missing") is None
    copy = response.replace(status=201)
    assert response._headers is None and copy._headers is None  # nothing built yet
    assert response.headers.getlist("Set-Cookie") == [b"a=1", b"b=2"]
    response.headers["Set-Cookie"] = "c=3"  # once built, the str view reads what was set
    assert response.header_list("Set-Cookie") == ["c=3"]
    assert copy.headers.getlist("Set-Cookie") == [b"a=1", b"b=2"]


def test_bytes_that_are_not_utf8_keep_every_byte_through_the_str_view() -> None:
    headers = Headers({"X-Raw": b"\xff\xfe ok"})
    text = headers.text("X-Raw")
    assert text is not None
    assert Headers.from_text([("X-Raw", text)])["X-Raw"] == b"\xff\xfe ok"


def test_a_request_headers_setter_takes_what_the_constructor_takes() -> None:
    request = Request("http://e.com/", headers={"A": "1"})
    request.headers = {"B": ["2", "3"]}
    assert dict(request.headers.items()) == {b"B": [b"2", b"3"]}
    request.headers = Headers({"C": "4"})
    assert request.headers.get("c") == b"4"


def test_response_headers_as_scrapy_sets_and_copies_them() -> None:
    given = Headers({"X": "1"})
    response = Response("http://e.com/", headers=given)
    assert response.headers is not given  # the constructor copies
    response.headers = given
    assert response.headers is given  # the setter keeps what it is given
    assert Response("http://e.com/", body=None).body == b""  # type: ignore[arg-type]


def test_scrapys_module_path_of_headers_is_the_same_class() -> None:
    """scrapy-splash and scrapy-playwright import ``scrapy.http.headers.Headers``."""
    from skitter.http import Headers as exported
    from skitter.http.headers import Headers

    assert Headers is exported
    assert Headers({"X-Splash": "1"}).get("x-splash") == b"1"
