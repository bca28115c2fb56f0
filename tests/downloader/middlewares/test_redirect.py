"""RedirectMiddleware: chains, method rewriting, loops, limits and opt-outs."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from multidict import CIMultiDict

from skitter.downloader import Downloader, RedirectMiddleware
from skitter.exceptions import RedirectError
from skitter.http import Request, Response
from skitter.utils.test import get_crawler

from ..conftest import MakeDownloader, MemoryStats


async def redirect(request: web.Request) -> web.Response:
    """``/r/<status>?to=<location>``"""
    status = int(request.match_info["status"])
    return web.Response(status=status, headers={"Location": request.query["to"]})


async def chain(request: web.Request) -> web.Response:
    """``/chain/<n>`` redirects to ``/chain/<n-1>``; ``/chain/0`` is the page."""
    n = int(request.match_info["n"])
    if n == 0:
        return web.Response(text="arrived")
    return web.Response(status=302, headers={"Location": f"/chain/{n - 1}"})


async def echo(request: web.Request) -> web.Response:
    body = await request.read()
    return web.json_response(
        {
            "method": request.method,
            "body": body.decode(),
            "content_type": request.headers.get("Content-Type"),
        }
    )


async def login(request: web.Request) -> web.Response:
    """Sets a session cookie and sends the client back to itself: not a loop."""
    if "session" in request.cookies:
        return web.Response(text="welcome")
    response = web.Response(status=302, headers={"Location": "/login"})
    response.set_cookie("session", "1")
    return response


async def loop(request: web.Request) -> web.Response:
    """``/loop/a`` -> ``/loop/b`` -> ``/loop/a`` ..."""
    other = "b" if request.match_info["name"] == "a" else "a"
    return web.Response(status=301, headers={"Location": f"/loop/{other}"})


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_route("*", "/r/{status}", redirect)
    app.router.add_get("/chain/{n}", chain)
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/login", login)
    app.router.add_get("/loop/{name}", loop)
    return await serve(app)


async def follow(downloader: Downloader, request: Request) -> tuple[Response, list[Request]]:
    """Fetch, re-fetching each redirect Request as the engine would schedule it."""
    hops: list[Request] = []
    result = await downloader.fetch(request)
    while isinstance(result, Request):
        hops.append(result)
        result = await downloader.fetch(result)
    return result, hops


async def test_chain_is_followed_with_meta_and_priority(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    start = Request(f"{base}/chain/3", priority=5, dont_filter=True)
    response, hops = await follow(downloader, start)
    assert response.text == "arrived"
    assert len(hops) == 3
    last = hops[-1]
    assert last.url == f"{base}/chain/0"
    assert last.meta["redirect_times"] == 3
    assert last.meta["redirect_urls"] == [f"{base}/chain/{n}" for n in (3, 2, 1)]
    assert last.meta["redirect_reasons"] == [302, 302, 302]
    assert last.priority == 5 + 3 * 2
    assert last.dont_filter
    assert start.meta == {"download_latency": start.meta["download_latency"]}  # untouched
    stats: MemoryStats = downloader.crawler.stats  # type: ignore[assignment]
    assert stats.values["downloader/redirect_count"] == 3
    assert stats.values["downloader/redirect_status_count/302"] == 3


@pytest.mark.parametrize(
    ("status", "method", "expected"),
    [
        (301, "POST", "GET"),
        (302, "POST", "GET"),
        (303, "POST", "GET"),
        (303, "PUT", "GET"),
        (307, "POST", "POST"),
        (308, "POST", "POST"),
        (301, "PUT", "PUT"),
    ],
)
async def test_method_and_body_after_redirect(
    status: int, method: str, expected: str, base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    request = Request(
        f"{base}/r/{status}?to=/echo",
        method=method,
        body=b"q=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    response, _ = await follow(downloader, request)
    sent = response.json()
    assert sent["method"] == expected
    if expected == method:
        assert (sent["body"], sent["content_type"]) == ("q=1", "application/x-www-form-urlencoded")
    else:
        assert (sent["body"], sent["content_type"]) == ("", None)


async def test_head_stays_head(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    _, hops = await follow(downloader, Request(f"{base}/r/302?to=/echo", method="HEAD"))
    assert hops[0].method == "HEAD"


async def test_loop_is_an_error_naming_the_chain(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    with pytest.raises(RedirectError, match="redirect loop") as info:
        await follow(downloader, Request(f"{base}/loop/a"))
    assert str(info.value).endswith(f"{base}/loop/a -> {base}/loop/b -> {base}/loop/a")


async def test_more_than_the_limit_is_an_error(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"REDIRECT_MAX_TIMES": 3})
    with pytest.raises(RedirectError, match="more than 3 redirects") as info:
        await follow(downloader, Request(f"{base}/chain/5"))
    assert info.value.request is not None
    assert info.value.request.url == f"{base}/chain/2"
    response, _ = await follow(downloader, Request(f"{base}/chain/3"))
    assert response.text == "arrived"


async def test_a_cookie_setting_self_redirect_is_not_a_loop(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    response, hops = await follow(downloader, Request(f"{base}/login"))
    assert response.text == "welcome"
    assert len(hops) == 1


@pytest.mark.parametrize(
    ("meta", "spider_statuses"),
    [
        ({"dont_redirect": True}, ()),
        ({"handle_httpstatus_list": [302]}, ()),
        ({"handle_httpstatus_all": True}, ()),
        ({}, (302,)),
    ],
)
async def test_opt_outs_return_the_redirect_response(
    meta: dict[str, Any],
    spider_statuses: tuple[int, ...],
    base: str,
    make_downloader: MakeDownloader,
) -> None:
    class Spider:
        handle_httpstatus_list = spider_statuses

    downloader = await make_downloader(spider=Spider())
    result = await downloader.fetch(Request(f"{base}/r/302?to=/echo", meta=meta))
    assert isinstance(result, Response)
    assert result.status == 302


@pytest.mark.parametrize("location", ["mailto:x@example.com", "ftp://127.0.0.1/f", ""])
async def test_unfollowable_location_returns_the_response(
    location: str, base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    result = await downloader.fetch(Request(f"{base}/r/301?to={location}"))
    assert isinstance(result, Response)
    assert result.status == 301


async def test_disabled_redirects_return_the_response(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"REDIRECT_ENABLED": False})
    assert downloader.middleware(RedirectMiddleware) is None
    result = await downloader.fetch(Request(f"{base}/chain/1"))
    assert isinstance(result, Response)
    assert result.status == 302


def redirect_from(request: Request, location: str, status: int = 302) -> Request:
    middleware = RedirectMiddleware(MemoryStats())
    response = Response(request.url, status, CIMultiDict(Location=location), request=request)
    result = middleware.process_response(request, response, spider=None)
    assert isinstance(result, Request)
    return result


def test_credentials_are_dropped_when_the_host_changes() -> None:
    headers = {"Authorization": "Basic eA==", "Cookie": "a=1", "X-Keep": "1"}
    request = Request("http://a.test/", headers=headers)
    same = redirect_from(request, "/elsewhere")
    assert set(same.headers) == {b"Authorization", b"Cookie", b"X-Keep"}
    other = redirect_from(request, "http://b.test/")
    assert set(other.headers) == {b"X-Keep"}
    secure = redirect_from(request, "https://a.test/")
    assert set(secure.headers) == {b"Cookie", b"X-Keep"}


def test_an_environment_proxy_is_dropped_when_the_scheme_changes() -> None:
    meta = {"proxy": "http://proxy.test:3128", "_scheme_proxy": True}
    assert (
        "proxy"
        not in redirect_from(Request("http://a.test/", meta=dict(meta)), "https://a.test/").meta
    )
    assert redirect_from(Request("http://a.test/", meta=dict(meta)), "/x").meta["proxy"]
    explicit = Request("http://a.test/", meta={"proxy": "http://proxy.test:3128"})
    assert redirect_from(explicit, "https://a.test/").meta["proxy"]


def test_relative_and_non_ascii_locations_are_made_absolute_and_safe() -> None:
    result = redirect_from(Request("http://a.test/dir/page"), "../caf\u00e9?q=a b")
    assert result.url == "http://a.test/caf%C3%A9?q=a%20b"


def test_allow_offsite_does_not_follow_a_redirect_to_another_host() -> None:
    """The exemption was granted for one URL; the old redirect copied it along."""
    request = Request("http://a.test/", meta={"allow_offsite": True}, dont_filter=True)
    assert redirect_from(request, "/elsewhere").meta["allow_offsite"] is True  # same host
    assert redirect_from(request, "https://a.test:8443/").meta["allow_offsite"] is True
    for location in ("http://b.test/", "//b.test/", "http://a.test@b.test/", "http://A.test.b/"):
        assert "allow_offsite" not in redirect_from(request, location).meta, location
    assert redirect_from(request, "http://b.test/").dont_filter  # the dupe filter's business


def test_a_location_without_a_fragment_keeps_the_requests_one() -> None:
    request = Request("http://a.test/page#part")
    assert redirect_from(request, "/moved").url == "http://a.test/moved#part"
    assert redirect_from(request, "/moved#other").url == "http://a.test/moved#other"


def test_three_leading_slashes_name_a_host_as_browsers_read_them() -> None:
    assert redirect_from(Request("http://a.test/x"), "///b.test/y").url == "http://b.test/y"


def test_without_a_spider_argument_the_crawlers_spider_decides() -> None:
    class Spider:
        handle_httpstatus_list = [302]

    middleware = RedirectMiddleware.from_crawler(get_crawler())
    assert middleware.crawler is not None
    middleware.crawler.spider = Spider()
    request = Request("http://a.test/")
    response = Response(request.url, 302, CIMultiDict(Location="/b"), request=request)
    assert middleware.process_response(request, response) is response


def test_a_latin1_location_is_percent_encoded_as_it_came() -> None:
    request = Request("http://a.test/first")
    response = Response(request.url, 302, {"Location": "/ação".encode("latin1")}, request=request)
    result = RedirectMiddleware(MemoryStats()).process_response(request, response)
    assert isinstance(result, Request)
    assert result.url == "http://a.test/a%E7%E3o"


def test_a_303_leaves_a_get_as_it_was_body_included() -> None:
    request = Request("http://a.test/", body=b"q", headers={"Content-Type": "text/plain"})
    result = redirect_from(request, "/b", status=303)
    assert (result.method, result.body, result.headers["Content-Type"]) == (
        "GET",
        b"q",
        b"text/plain",
    )
