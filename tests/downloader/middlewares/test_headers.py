"""DefaultHeaders, UserAgent and HttpCompression middlewares, seen from the server."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter.http import Request, Response

from ..conftest import MakeDownloader


async def echo_headers(request: web.Request) -> web.Response:
    return web.json_response(dict(request.headers))


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_get("/", echo_headers)
    return await serve(app)


async def sent_headers(make: MakeDownloader, request: Request, **kw: Any) -> dict[str, str]:
    downloader = await make(**kw)
    response = await downloader.fetch(request)
    assert isinstance(response, Response)
    return dict(response.json())


async def test_defaults_are_sent(base: str, make_downloader: MakeDownloader) -> None:
    headers = await sent_headers(make_downloader, Request(f"{base}/"))
    assert headers["User-Agent"] == "skitter/0.1"
    assert headers["Accept"].startswith("text/html")
    assert headers["Accept-Language"] == "en"
    assert headers["Accept-Encoding"] == "gzip, deflate, br, zstd"  # all it can decode


async def test_the_requests_own_headers_win(base: str, make_downloader: MakeDownloader) -> None:
    mine = {"User-Agent": "mine/1", "Accept-Language": "fr", "Accept-Encoding": "identity"}
    headers = await sent_headers(make_downloader, Request(f"{base}/", headers=mine))
    assert {k: headers[k] for k in mine} == mine


async def test_settings_choose_the_values(base: str, make_downloader: MakeDownloader) -> None:
    settings = {"USER_AGENT": "bot/2", "DEFAULT_REQUEST_HEADERS": {"X-Crawl": "yes"}}
    headers = await sent_headers(make_downloader, Request(f"{base}/"), settings=settings)
    assert headers["User-Agent"] == "bot/2"
    assert headers["X-Crawl"] == "yes"
    assert "Accept-Language" not in headers


async def test_spider_user_agent_attribute_wins(base: str, make_downloader: MakeDownloader) -> None:
    class Spider:
        user_agent = "spider-agent/3"

    headers = await sent_headers(make_downloader, Request(f"{base}/"), spider=Spider())
    assert headers["User-Agent"] == "spider-agent/3"


async def test_switched_off_they_send_nothing(base: str, make_downloader: MakeDownloader) -> None:
    settings = {"USER_AGENT": "", "DEFAULT_REQUEST_HEADERS": {}, "COMPRESSION_ENABLED": False}
    headers = await sent_headers(make_downloader, Request(f"{base}/"), settings=settings)
    for name in ("User-Agent", "Accept-Language", "Accept-Encoding"):
        assert name not in headers


def test_without_a_user_agent_the_middleware_stays_for_scrapys_spider_opened() -> None:
    from skitter.downloader import UserAgentMiddleware
    from skitter.utils.test import get_crawler

    middleware = UserAgentMiddleware.from_crawler(get_crawler(settings_dict={"USER_AGENT": ""}))
    request = Request("http://127.0.0.1/")
    middleware.process_request(request)
    assert "User-Agent" not in request.headers

    class Spider:
        user_agent = "late/1"

    middleware.spider_opened(Spider())
    middleware.process_request(request)
    assert request.headers["User-Agent"] == b"late/1"
