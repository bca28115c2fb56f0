"""A request's own ``Authorization`` / ``Proxy-Authorization`` header (and ``Cookie``
with ``dont_merge_cookies``) is stored without its value and is still sent with it by
the process that stored it, as in a crawl that stores nothing; a process that was never
given it stops the crawl loudly instead of sending the request without. Headers a
middleware makes again at download time (HTTP auth's, the cookie jar's) are not held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import CrawlFailed, FatalError
from skitter.http import _heldheaders
from skitter.http._codec import decode_request, encode_request
from skitter.http._heldheaders import HEADERS_MARK, LIMIT, HeldHeaders
from skitter.testing import MockResponse, MockTransport

TOKEN = "Bearer tok-3f9/a+b"


def test_the_spiders_own_headers_are_held_not_stored() -> None:
    request = Request(
        "https://example.com/api",
        headers={"Authorization": TOKEN, "Proxy-Authorization": "Basic cHg=", "Accept": "*/*"},
    )
    data = encode_request(request)
    assert b"tok-3f9" not in data and b"cHg=" not in data
    decoded = decode_request(data)
    assert dict(decoded.headers) == dict(request.headers)
    assert HEADERS_MARK not in decoded.meta


def test_a_cookie_header_is_held_only_where_the_jar_keeps_away() -> None:
    jarred = Request("https://example.com/", headers={"Cookie": "sid=1"})
    assert "Cookie" not in decode_request(encode_request(jarred)).headers  # the jar's to make
    own = Request(
        "https://example.com/", headers={"Cookie": "sid=1"}, meta={"dont_merge_cookies": True}
    )
    data = encode_request(own)
    assert b"sid=1" not in data
    assert decode_request(data).headers["Cookie"] == b"sid=1"


def test_http_auths_own_header_is_made_again_not_held() -> None:
    held = HeldHeaders()
    held.derive("Authorization", "Basic dXNlcjpwYXNz")
    assert held.is_derived("authorization", "Basic dXNlcjpwYXNz")
    assert not held.is_derived("Authorization", TOKEN)
    assert len(held) == 0


def test_another_process_keeps_the_marks_for_the_downloader_to_refuse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = encode_request(Request("https://example.com/", headers={"Authorization": TOKEN}))
    monkeypatch.setattr(_heldheaders, "HELD_HEADERS", HeldHeaders())  # a process that holds none
    decoded = decode_request(data)
    assert "Authorization" not in decoded.headers
    assert isinstance(decoded.meta[HEADERS_MARK], list)


def test_a_token_per_request_fails_loudly_past_the_limit() -> None:
    held = HeldHeaders()
    for n in range(LIMIT):
        held.hold("Authorization", f"t{n}")
    assert held.hold("Authorization", "t0") == held.hold("authorization", "t0")
    with pytest.raises(FatalError, match="downloader middleware"):
        held.hold("Authorization", "one more")


def _site(request: Request) -> Any:
    if request.headers.get("Authorization") != TOKEN.encode():
        return MockResponse.text("who are you?", 401)
    if request.url.endswith("/"):
        return MockResponse.html("".join(f'<a href="/p/{n}">p</a>' for n in range(3)))
    return "<p>secret page</p>"


class Api(Spider):
    name = "api"
    custom_settings = {"LOG_LEVEL": "WARNING", "RETRY_TIMES": 0}

    def start_requests(self) -> Any:
        yield Request("http://example.com/", headers={"Authorization": TOKEN})

    def parse(self, response: Response) -> Any:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, headers={"Authorization": TOKEN}, callback=self.page)

    def page(self, response: Response) -> Any:
        yield {"url": response.url}


async def test_a_resumed_job_sends_its_stored_requests_with_their_headers(
    tmp_path: Path,
) -> None:
    """The first run stops after one item; the second, in this process, reads the
    other pages' requests back from the job directory."""
    site = MockTransport(_site)
    first = {"DOWNLOAD_TRANSPORT": site, "CLOSESPIDER_ITEMCOUNT": 1, "CONCURRENT_REQUESTS": 1}
    stats = await Crawler(Api, first, job_dir=tmp_path / "job").run()
    assert stats["item_scraped_count"] == 1
    stats = await Crawler(Api, {"DOWNLOAD_TRANSPORT": site}, job_dir=tmp_path / "job").run()
    assert stats["finish_reason"] == "finished"
    resumed = [request.url for request in site.requests[2:]]  # after "/" and the first page
    assert {"http://example.com/p/1", "http://example.com/p/2"} <= set(resumed)
    assert all(request.headers.text("Authorization") == TOKEN for request in site.requests)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "job").rglob("*") if path.is_file())
    assert b"tok-3f9" not in stored


async def test_a_request_whose_headers_this_process_lacks_stops_the_crawl() -> None:
    class Elsewhere(Spider):
        name = "elsewhere"
        custom_settings = {"LOG_LEVEL": "CRITICAL"}

        def start_requests(self) -> Any:  # as decoded from another worker's store
            yield Request("http://example.com/", meta={HEADERS_MARK: ["0123456789abcdef"]})

    site = MockTransport(_site)
    with pytest.raises(CrawlFailed, match="DEFAULT_REQUEST_HEADERS"):
        await Crawler(Elsewhere, {"DOWNLOAD_TRANSPORT": site}).run()
    assert site.requests == []  # never sent without it


def test_a_urls_user_password_is_held_not_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    data = encode_request(Request("http://bob:pa/ss@example.com/a?b=1"))
    assert b"pa/ss" not in data and b"bob" not in data
    assert decode_request(data).url == "http://bob:pa/ss@example.com/a?b=1"
    monkeypatch.setattr(_heldheaders, "HELD_HEADERS", HeldHeaders())  # a process that holds none
    decoded = decode_request(data)
    assert decoded.url == "http://example.com/a?b=1"
    assert isinstance(decoded.meta[HEADERS_MARK], list)


def test_an_at_sign_in_a_path_is_not_a_user() -> None:
    data = encode_request(Request("https://example.com/@someone"))
    assert b"@someone" in data
    assert decode_request(data).url == "https://example.com/@someone"


def _basic_site(request: Request) -> Any:
    if not request.url.startswith("http://bob:s3cret-pw@"):
        return MockResponse.text("who are you?", 401)
    if request.url.endswith("/"):
        return MockResponse.html("".join(f'<a href="/p/{n}">p</a>' for n in range(3)))
    return "<p>secret page</p>"


class BasicAuthUrls(Spider):
    name = "basic"
    start_urls = ["http://bob:s3cret-pw@example.com/"]
    custom_settings = {"LOG_LEVEL": "WARNING", "RETRY_TIMES": 0}

    def parse(self, response: Response) -> Any:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.page)

    def page(self, response: Response) -> Any:
        yield {"page": response.url.rsplit("/", 1)[1]}


async def test_a_resumed_job_sends_its_stored_urls_with_their_user_password(
    tmp_path: Path,
) -> None:
    site = MockTransport(_basic_site)
    first = {"DOWNLOAD_TRANSPORT": site, "CLOSESPIDER_ITEMCOUNT": 1, "CONCURRENT_REQUESTS": 1}
    stats = await Crawler(BasicAuthUrls, first, job_dir=tmp_path / "job").run()
    assert stats["item_scraped_count"] == 1
    settings = {"DOWNLOAD_TRANSPORT": site}
    stats = await Crawler(BasicAuthUrls, settings, job_dir=tmp_path / "job").run()
    assert stats["finish_reason"] == "finished"
    assert len(site.requests) >= 4  # the first run's two, and the resumed pages
    assert all(request.url.startswith("http://bob:s3cret-pw@") for request in site.requests)
    stored = b"".join(path.read_bytes() for path in (tmp_path / "job").rglob("*") if path.is_file())
    assert b"s3cret-pw" not in stored  # neither in the stored requests nor in the task records
