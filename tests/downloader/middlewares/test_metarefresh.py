"""MetaRefreshMiddleware: <meta http-equiv=refresh> and the Refresh header, followed with
the redirect rules (limit, loop, scope), against a real local server."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Spider
from skitter.downloader import Downloader, MetaRefreshMiddleware
from skitter.exceptions import IgnoreRequest, RedirectError
from skitter.http import HtmlResponse, Request, Response

from ..conftest import MakeDownloader, MemoryStats


def refresh_page(content: str, wrap: str = "") -> str:
    tag = f'<meta http-equiv="refresh" content="{content}">'
    if wrap:
        tag = f"<{wrap}>{tag}</{wrap}>"
    return f"<html><head>{tag}</head><body>wait</body></html>"


async def meta(request: web.Request) -> web.Response:
    """``/meta?delay=&to=&wrap=``: an HTML page refreshing to ``to`` after ``delay``."""
    content = f"{request.query.get('delay', '0')}; url={request.query['to']}"
    return web.Response(
        text=refresh_page(content, request.query.get("wrap", "")), content_type="text/html"
    )


async def header(request: web.Request) -> web.Response:
    """``/header?to=``: a plain-text page with ``Refresh: 1; url=<to>``."""
    return web.Response(text="moved", headers={"Refresh": f"1; url={request.query['to']}"})


async def loop(request: web.Request) -> web.Response:
    other = "b" if request.match_info["name"] == "a" else "a"
    return web.Response(text=refresh_page(f"0;url=/loop/{other}"), content_type="text/html")


async def target(request: web.Request) -> web.Response:
    return web.Response(text="arrived", content_type="text/html")


async def as_text(request: web.Request) -> web.Response:
    return web.Response(text=refresh_page("0; url=/target"), content_type="text/plain")


@pytest.fixture
async def base(serve: Any) -> str:
    app = web.Application()
    app.router.add_route("*", "/meta", meta)
    app.router.add_route("*", "/header", header)
    app.router.add_get("/loop/{name}", loop)
    app.router.add_get("/target", target)
    app.router.add_get("/text", as_text)
    return str(await serve(app))


async def follow(downloader: Downloader, request: Request) -> tuple[Response, list[Request]]:
    """Fetch, re-fetching each redirect Request as the engine would schedule it."""
    hops: list[Request] = []
    result = await downloader.fetch(request)
    while isinstance(result, Request):
        hops.append(result)
        result = await downloader.fetch(result)
    return result, hops


async def test_meta_refresh_is_followed_as_a_redirect(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    start = Request(f"{base}/meta?delay=3&to=/target", method="POST", body=b"x=1", priority=1)
    response, hops = await follow(downloader, start)
    assert response.text == "arrived"
    [hop] = hops
    assert hop.url == f"{base}/target"
    assert hop.method == "GET"
    assert hop.body == b""
    assert hop.priority == 3
    assert hop.meta["redirect_urls"] == [start.url]
    assert hop.meta["redirect_reasons"] == ["meta refresh"]
    assert hop.meta["redirect_times"] == 1
    stats: MemoryStats = downloader.crawler.stats  # type: ignore[assignment]
    assert stats.values["downloader/metarefresh_count"] == 1
    assert stats.values["downloader/redirect_count"] == 1


async def test_the_refresh_header_is_followed(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    response, hops = await follow(downloader, Request(f"{base}/header?to=/target"))
    assert response.text == "arrived"
    assert hops[0].meta["redirect_reasons"] == ["refresh header"]


async def test_a_delay_at_or_above_the_maximum_is_not_followed(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"METAREFRESH_MAXDELAY": 10})
    result = await downloader.fetch(Request(f"{base}/meta?delay=10&to=/target"))
    assert isinstance(result, Response)
    assert b"wait" in result.body
    result = await downloader.fetch(Request(f"{base}/meta?delay=9.5&to=/target"))
    assert isinstance(result, Request)


async def test_a_refresh_loop_is_stopped(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    with pytest.raises(RedirectError, match=r"redirect loop: .*/loop/a -> .*/loop/b -> .*/loop/a"):
        await follow(downloader, Request(f"{base}/loop/a"))


async def test_the_redirect_limit_counts_refreshes(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"REDIRECT_MAX_TIMES": 1})
    # A refresh to a redirect: the second hop is one too many.
    start = Request(f"{base}/meta?to=/header%3Fto%3D/target")
    with pytest.raises(RedirectError, match="more than 1 redirects"):
        await follow(downloader, start)


async def test_an_offsite_refresh_is_refused(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    class Shop:
        allowed_domains = ("127.0.0.1",)

    site, port = await host_site({})
    site.pages["/go"] = lambda request: web.Response(
        text=refresh_page(f"0; url=http://localhost:{port}/secret"), content_type="text/html"
    )
    downloader = await make_downloader(spider=Shop())
    with pytest.raises(IgnoreRequest, match="offsite"):
        await follow(downloader, Request(f"http://127.0.0.1:{port}/go"))
    assert site.on("localhost") == 0


async def test_not_followed(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    cases = [
        Request(f"{base}/meta?to=/target&wrap=noscript"),  # METAREFRESH_IGNORE_TAGS
        Request(f"{base}/meta?to=/target", meta={"dont_redirect": True}),
        Request(f"{base}/header?to=/target", method="HEAD"),
        Request(f"{base}/meta?to=mailto:a@b.c"),  # not HTTP
        Request(f"{base}/text"),  # a tag in a body that is not HTML
    ]
    for request in cases:
        assert isinstance(await downloader.fetch(request), Response), request


async def test_ignore_tags_and_switch(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"METAREFRESH_IGNORE_TAGS": []})
    result = await downloader.fetch(Request(f"{base}/meta?to=/target&wrap=noscript"))
    assert isinstance(result, Request)
    off = await make_downloader({"METAREFRESH_ENABLED": False})
    assert off.middleware(MetaRefreshMiddleware) is None
    assert isinstance(await off.fetch(Request(f"{base}/meta?to=/target")), Response)


def test_scrapy_cases_without_a_server(make_crawler: Any) -> None:
    mw = MetaRefreshMiddleware.from_crawler(make_crawler())
    body = b"""<html><head><meta http-equiv="refresh" content="0;URL='http://example.org/new'">"""
    headers = {"Content-Type": "text/plain", "Content-Length": "4", "Content-Location": "/x"}
    post = Request("http://example.org", method="POST", body=b"test", headers=headers)
    page = HtmlResponse(post.url, 200, {"Content-Type": "text/html"}, body, post)
    redirected = mw.process_response(post, page, None)
    assert isinstance(redirected, Request)
    assert redirected.url == "http://example.org/new"
    assert redirected.method == "GET"
    assert not redirected.body
    for name in headers:
        assert name not in redirected.headers
    local = Request("file:///tmp/page.html")
    local_page = HtmlResponse(local.url, 200, {"Content-Type": "text/html"}, body, local)
    assert mw.process_response(local, local_page, None) is local_page
    plain = Response(post.url, 200, {"Content-Type": "text/html"}, body, Request(post.url))
    assert mw.process_response(plain.request, plain, None) is plain  # not an HtmlResponse


class Refreshed(Spider):
    name = "refreshed"
    custom_settings = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING"}
    seen: list[tuple[str, list[Any]]] = []

    def start_requests(self) -> Any:
        base = self.settings["BASE"]
        yield Request(f"{base}/meta?to=/target")
        yield Request(f"{base}/loop/a")

    def parse(self, response: Response) -> Any:
        self.seen.append((response.url, response.meta.get("redirect_reasons", [])))
        yield {"url": response.url}


async def test_a_crawl_follows_a_refresh_and_stops_a_loop(base: str) -> None:
    stats = await Crawler(Refreshed, {"BASE": base}).run()
    assert Refreshed.seen == [(f"{base}/target", ["meta refresh"])]
    assert stats["item_scraped_count"] == 1
    assert stats["downloader/metarefresh_count"] == 2  # /meta's, and /loop/a -> /loop/b
    assert stats["engine/failed_requests/RedirectError"] == 1  # /loop/b -> /loop/a
