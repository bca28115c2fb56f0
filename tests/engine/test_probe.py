"""``Crawler.probe()``: one request at a time through a crawl's real components, on a
site answered in memory (``MockTransport``)."""

from __future__ import annotations

from typing import Any

import pytest

from skitter import Crawler, Request, Spider
from skitter.exceptions import DropItem, HttpError, IgnoreRequest
from skitter.testing import MockResponse, MockTransport, refused_port

#: The site's address: the spider's allowed domain, on a port where nothing listens
#: (``MockTransport`` answers; a request that reached the network would be refused).
BASE = f"http://127.0.0.1:{refused_port()}"
PAGE = '<html><a href="/next">next</a><a href="http://elsewhere.test/x">x</a></html>'


def _site(hits: dict[str, int]) -> dict[str, Any]:
    """The settings that crawl the site in memory; ``hits`` counts requests by path."""

    def answer(request: Request) -> Any:
        path = request.parsed_url.path
        hits[path] = hits.get(path, 0) + 1
        if path in ("/page", "/private"):
            return PAGE
        if path == "/flaky":
            return MockResponse.text("busy", 503) if hits[path] < 3 else "<html>ok</html>"
        if path == "/down":
            return MockResponse.text("down", 503)
        if path == "/redirect":
            return MockResponse.redirect("/page")
        if path == "/robots.txt":
            return MockResponse.text("User-agent: *\nDisallow: /private\n")
        return MockResponse.text("gone", 404)

    return {"DOWNLOAD_TRANSPORT": MockTransport(answer)}


class Local(Spider):
    name = "local"
    allowed_domains = ["127.0.0.1"]

    def parse(self, response: Any) -> Any:
        yield {"url": response.url}
        yield from response.follow_all(css="a")


FAST = {"RETRY_DELAYS": [0.0], "RETRY_TIMES": 2}


async def test_fetch_follows_redirects_through_the_middlewares() -> None:
    hits: dict[str, int] = {}
    base = BASE
    async with Crawler(Local, {**FAST, **_site(hits)}).probe() as probe:
        response = await probe.fetch(Request(base + "/redirect"))
    assert response.status == 200
    assert response.url == base + "/page"
    assert response.request.meta["redirect_urls"] == [base + "/redirect"]


async def test_fetch_without_redirect_shows_the_3xx() -> None:
    base = BASE
    request = Request(base + "/redirect", meta={"handle_httpstatus_all": True})
    async with Crawler(Local, {**FAST, **_site({})}).probe() as probe:
        response = await probe.fetch(request)
    assert response.status == 302


async def test_fetch_waits_out_retries_by_the_table() -> None:
    hits: dict[str, int] = {}
    base = BASE
    async with Crawler(Local, {**FAST, **_site(hits)}).probe() as probe:
        response = await probe.fetch(Request(base + "/flaky"))
    assert response.status == 200
    assert hits["/flaky"] == 3


async def test_out_of_retries_the_last_response_is_returned() -> None:
    hits: dict[str, int] = {}
    base = BASE
    async with Crawler(Local, {**FAST, **_site(hits)}).probe() as probe:
        response = await probe.fetch(Request(base + "/down"))
        with pytest.raises(HttpError):
            await probe.check_input(response)  # the crawl's callback would not see it
    assert response.status == 503
    assert hits["/down"] == 3  # the first attempt and RETRY_TIMES=2 retries


async def test_scope_and_robots_txt_refuse_before_any_download() -> None:
    hits: dict[str, int] = {}
    base = BASE
    elsewhere = base.replace("127.0.0.1", "localhost")
    async with Crawler(Local, {**FAST, **_site(hits), "ROBOTSTXT_OBEY": True}).probe() as probe:
        with pytest.raises(IgnoreRequest, match="offsite"):
            await probe.fetch(Request(elsewhere + "/page"))
        with pytest.raises(IgnoreRequest):
            await probe.fetch(Request(base + "/private"))
    assert "/private" not in hits
    assert "/page" not in hits


async def test_scrape_runs_the_spider_middlewares_and_returns_the_output() -> None:
    base = BASE
    async with Crawler(Local, {**FAST, **_site({})}).probe() as probe:
        response = await probe.fetch(Request(base + "/page"))
        output = await probe.scrape(response)
    assert output[0] == {"url": base + "/page"}
    # The offsite spider middleware dropped the link to elsewhere.test.
    assert [r.url for r in output[1:]] == [base + "/next"]


class Tagger:
    def process_item(self, item: Any, spider: Any) -> Any:
        if item.get("drop"):
            raise DropItem("asked to")
        return {**item, "tagged": True}


async def test_process_item_goes_through_the_pipelines() -> None:
    crawler = Crawler(Local, {"ITEM_PIPELINES": {Tagger: 100}})
    async with crawler.probe() as probe:
        assert await probe.process_item({"a": 1}) == {"a": 1, "tagged": True}
        assert await probe.process_item({"drop": True}) is None
