"""CookiesMiddleware: a session per spider and per meta["cookiejar"], over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter.downloader import CookiesMiddleware, Downloader
from skitter.http import Request, Response

from ..conftest import MakeDownloader


async def set_cookie(request: web.Request) -> web.Response:
    response = web.Response(text="set")
    for name, value in request.query.items():
        response.set_cookie(name, value)
    return response


async def show_cookie(request: web.Request) -> web.Response:
    return web.Response(text=request.headers.get("Cookie", ""))


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_get("/set", set_cookie)
    app.router.add_get("/show", show_cookie)
    app.router.add_get("/sub/show", show_cookie)
    return await serve(app)


async def text(downloader: Downloader, url: str, **kwargs: Any) -> str:
    response = await downloader.fetch(Request(url, **kwargs))
    assert isinstance(response, Response)
    return response.text


async def test_cookies_set_by_a_response_are_sent_on_the_next(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    assert await text(downloader, f"{base}/show") == ""
    await text(downloader, f"{base}/set?session=abc&lang=en")
    sent = await text(downloader, f"{base}/show")
    assert sorted(sent.split("; ")) == ["lang=en", "session=abc"]


async def test_each_cookiejar_is_a_separate_session(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    await text(downloader, f"{base}/set?user=alice", meta={"cookiejar": 1})
    await text(downloader, f"{base}/set?user=bob", meta={"cookiejar": 2})
    assert await text(downloader, f"{base}/show", meta={"cookiejar": 1}) == "user=alice"
    assert await text(downloader, f"{base}/show", meta={"cookiejar": 2}) == "user=bob"
    assert await text(downloader, f"{base}/show") == ""


async def test_request_cookies_are_sent_and_kept(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    assert await text(downloader, f"{base}/show", cookies={"a": "1"}) == "a=1"
    assert await text(downloader, f"{base}/show") == "a=1"  # stored in the jar


async def test_request_cookies_as_a_list_honour_path(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    cookies = [{"name": "only_sub", "value": "x", "path": "/sub"}]
    await text(downloader, f"{base}/sub/show", cookies=cookies)
    assert await text(downloader, f"{base}/sub/show") == "only_sub=x"
    assert await text(downloader, f"{base}/show") == ""


async def test_invalid_request_cookie_is_skipped_not_fatal(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    cookies = [{"name": "bad name;", "value": "x"}, {"name": "good", "value": "y"}]
    assert await text(downloader, f"{base}/show", cookies=cookies) == "good=y"


async def test_dont_merge_cookies_leaves_header_and_jar_alone(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    await text(downloader, f"{base}/set?kept=1")
    raw = {"Cookie": "raw=1"}
    meta = {"dont_merge_cookies": True}
    assert await text(downloader, f"{base}/show", headers=raw, meta=meta) == "raw=1"
    await text(downloader, f"{base}/set?ignored=1", meta=meta)
    assert await text(downloader, f"{base}/show") == "kept=1"


async def test_disabled_cookies_are_not_kept(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"COOKIES_ENABLED": False})
    assert downloader.middleware(CookiesMiddleware) is None
    await text(downloader, f"{base}/set?session=abc")
    assert await text(downloader, f"{base}/show") == ""


def test_the_middleware_works_without_a_running_event_loop() -> None:
    """Scrapy's synchronous API, driven by hand (a script, a unit test): the jars are
    made outside any event loop and still keep and send cookies."""
    middleware = CookiesMiddleware()
    first = Request("http://127.0.0.1/a")
    middleware.process_request(first)
    response = Response(first.url, headers={"Set-Cookie": "sid=1; Path=/"}, request=first)
    middleware.process_response(first, response)
    second = Request("http://127.0.0.1/b")
    middleware.process_request(second)
    assert second.headers.get("Cookie") == b"sid=1"
