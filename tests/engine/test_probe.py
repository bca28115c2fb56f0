"""``Crawler.probe()``: one request at a time through a crawl's real components."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.exceptions import DropItem, HttpError, IgnoreRequest

Serve = Any


def _site(hits: dict[str, int]) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        return web.Response(
            text='<html><a href="/next">next</a><a href="http://elsewhere.test/x">x</a></html>',
            content_type="text/html",
        )

    async def flaky(request: web.Request) -> web.Response:
        hits["/flaky"] = hits.get("/flaky", 0) + 1
        if hits["/flaky"] < 3:
            return web.Response(status=503, text="busy")
        return web.Response(text="<html>ok</html>", content_type="text/html")

    async def down(request: web.Request) -> web.Response:
        hits["/down"] = hits.get("/down", 0) + 1
        return web.Response(status=503, text="down")

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound("/page")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /private\n")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="gone")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/private", page)
    app.router.add_get("/flaky", flaky)
    app.router.add_get("/down", down)
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/missing", missing)
    return app


class Local(Spider):
    name = "local"
    allowed_domains = ["127.0.0.1"]

    def parse(self, response: Any) -> Any:
        yield {"url": response.url}
        yield from response.follow_all(css="a")


FAST = {"RETRY_DELAYS": [0.0], "RETRY_TIMES": 2}


async def test_fetch_follows_redirects_through_the_middlewares(serve: Serve) -> None:
    hits: dict[str, int] = {}
    base = await serve(_site(hits))
    async with Crawler(Local, FAST).probe() as probe:
        response = await probe.fetch(Request(base + "/redirect"))
    assert response.status == 200
    assert response.url == base + "/page"
    assert response.request.meta["redirect_urls"] == [base + "/redirect"]


async def test_fetch_without_redirect_shows_the_3xx(serve: Serve) -> None:
    base = await serve(_site({}))
    request = Request(base + "/redirect", meta={"handle_httpstatus_all": True})
    async with Crawler(Local, FAST).probe() as probe:
        response = await probe.fetch(request)
    assert response.status == 302


async def test_fetch_waits_out_retries_by_the_table(serve: Serve) -> None:
    hits: dict[str, int] = {}
    base = await serve(_site(hits))
    async with Crawler(Local, FAST).probe() as probe:
        response = await probe.fetch(Request(base + "/flaky"))
    assert response.status == 200
    assert hits["/flaky"] == 3


async def test_out_of_retries_the_last_response_is_returned(serve: Serve) -> None:
    hits: dict[str, int] = {}
    base = await serve(_site(hits))
    async with Crawler(Local, FAST).probe() as probe:
        response = await probe.fetch(Request(base + "/down"))
        with pytest.raises(HttpError):
            await probe.check_input(response)  # the crawl's callback would not see it
    assert response.status == 503
    assert hits["/down"] == 3  # the first attempt and RETRY_TIMES=2 retries


async def test_scope_and_robots_txt_refuse_before_any_download(serve: Serve) -> None:
    hits: dict[str, int] = {}
    base = await serve(_site(hits))
    elsewhere = base.replace("127.0.0.1", "localhost")
    async with Crawler(Local, {**FAST, "ROBOTSTXT_OBEY": True}).probe() as probe:
        with pytest.raises(IgnoreRequest, match="offsite"):
            await probe.fetch(Request(elsewhere + "/page"))
        with pytest.raises(IgnoreRequest):
            await probe.fetch(Request(base + "/private"))
    assert "/private" not in hits
    assert "/page" not in hits


async def test_scrape_runs_the_spider_middlewares_and_returns_the_output(serve: Serve) -> None:
    base = await serve(_site({}))
    async with Crawler(Local, FAST).probe() as probe:
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
