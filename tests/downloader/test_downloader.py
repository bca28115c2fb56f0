"""The Downloader: which middlewares, in which order, and how they reach the transport."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

import skitter.downloader
from skitter.downloader import (
    DOWNLOADER_MIDDLEWARES_BASE,
    AutoRenderMiddleware,
    ConditionalRecrawlMiddleware,
    CookiesMiddleware,
    DefaultHeadersMiddleware,
    DownloadHandler,
    HttpAuthMiddleware,
    HttpCompressionMiddleware,
    HttpProxyMiddleware,
    MetaRefreshMiddleware,
    OffsiteMiddleware,
    RedirectMiddleware,
    RetryMiddleware,
    RobotsTxtMiddleware,
    UserAgentMiddleware,
)
from skitter.http import Request, Response

from .conftest import MakeDownloader


def test_public_names() -> None:
    assert sorted(skitter.downloader.__all__) == [
        "AiohttpTransport",
        "AutoRenderMiddleware",
        "BrowserTransport",
        "ConditionalRecrawlMiddleware",
        "CookiesMiddleware",
        "DOWNLOADER_MIDDLEWARES_BASE",
        "DefaultHeadersMiddleware",
        "DownloadHandler",
        "DownloadResult",
        "Downloader",
        "DownloaderMiddleware",
        "HttpAuthMiddleware",
        "HttpCacheMiddleware",
        "HttpCompressionMiddleware",
        "HttpProxyMiddleware",
        "MetaRefreshMiddleware",
        "OffsiteGuard",
        "OffsiteMiddleware",
        "ProxyPoolMiddleware",
        "RedirectMiddleware",
        "Resolver",
        "RetryMiddleware",
        "RobotsTxtMiddleware",
        "SessionMiddleware",
        "ThreadedResolver",
        "Transport",
        "UserAgentMiddleware",
        "compose",
        "parse_retry_after",
        "wants_render",
    ]


def test_base_orders_are_scrapys() -> None:
    # Scrapy's, plus skitter's sessions (650) and proxy pool (740), which sit between
    # redirects and cookies, and between cookies and the environment's proxy.
    assert list(DOWNLOADER_MIDDLEWARES_BASE.values()) == [
        50,
        100,
        150,
        300,
        400,
        500,
        550,
        580,
        590,
        600,
        650,
        700,
        740,
        750,
        900,
        950,
    ]


class Shop:
    allowed_domains = ("127.0.0.1",)


async def test_built_ins_in_order(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"ROBOTSTXT_OBEY": True}, spider=Shop())
    assert [type(mw) for mw in downloader.middlewares] == [
        OffsiteMiddleware,
        RobotsTxtMiddleware,
        AutoRenderMiddleware,
        HttpAuthMiddleware,  # without credentials too: it refuses meta["http_user"]
        DefaultHeadersMiddleware,
        UserAgentMiddleware,
        RetryMiddleware,
        MetaRefreshMiddleware,
        HttpCompressionMiddleware,
        RedirectMiddleware,
        CookiesMiddleware,
        HttpProxyMiddleware,
        ConditionalRecrawlMiddleware,
    ]


async def test_offsite_middleware_admits_everything_without_allowed_domains(
    make_downloader: MakeDownloader,
) -> None:
    downloader = await make_downloader()
    middleware = downloader.middleware(OffsiteMiddleware)
    assert middleware is not None  # Scrapy's is there too; spider_opened may restrict it
    assert downloader.scope.restricted is False
    assert middleware.process_request(Request("http://anywhere.test/")) is None


async def test_none_switches_a_built_in_off(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader(
        {"DOWNLOADER_MIDDLEWARES": {"skitter.downloader.UserAgentMiddleware": None}}
    )
    assert downloader.middleware(UserAgentMiddleware) is None
    assert downloader.middleware(DefaultHeadersMiddleware) is not None


class Recorder:
    """A user middleware: records what it saw on the way in and out."""

    seen: list[str]

    def __init__(self) -> None:
        self.seen = []

    def process_request(self, request: Request, spider: Any) -> None:
        self.seen.append(f"request UA={request.headers.text('User-Agent')}")

    def process_response(self, request: Request, response: Response, spider: Any) -> Response:
        self.seen.append(f"response {response.status}")
        return response


class Answering:
    """A user middleware that answers without any download."""

    def process_request(self, request: Request, spider: Any) -> Response:
        return Response(request.url, 200, body=b"cached", request=request)


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", ok)
    return await serve(app)


async def test_custom_middlewares_slot_in_by_order(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"DOWNLOADER_MIDDLEWARES": {Recorder: 450}})
    recorder = downloader.middleware(Recorder)
    response = await downloader.fetch(Request(f"{base}/"))
    assert isinstance(response, Response)
    assert response.text == "ok"
    # At 450 it runs after DefaultHeaders (400) and before UserAgent (500).
    assert recorder.seen == ["request UA=None", "response 200"]


async def test_a_middleware_may_answer_itself(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"DOWNLOADER_MIDDLEWARES": {Answering: 50}})
    response = await downloader.fetch(Request(f"{base}/"))
    assert isinstance(response, Response)
    assert response.body == b"cached"
    assert downloader.crawler.stats.get("downloader/request_count") is None


class Binder:
    """A middleware that downloads on its own through ``bind_transport``."""

    fetch: DownloadHandler

    def bind_transport(self, fetch: DownloadHandler) -> None:
        self.fetch = fetch


async def test_bind_transport_gets_the_layers_inside(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"DOWNLOADER_MIDDLEWARES": {Binder: 50, Recorder: 800}})
    binder = downloader.middleware(Binder)
    recorder = downloader.middleware(Recorder)
    response = await binder.fetch(Request(f"{base}/"))
    assert isinstance(response, Response)
    assert response.text == "ok"
    assert recorder.seen == ["request UA=skitter/0.1", "response 200"]


async def test_downloader_closes_its_transport(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    await downloader.close()
    with pytest.raises(RuntimeError, match="before open"):
        await downloader.fetch(Request("http://127.0.0.1:1/"))
