"""RobotsTxtMiddleware against a real site: rules, error statuses, one fetch per host."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from skitter.downloader import RobotsTxtMiddleware
from skitter.exceptions import IgnoreRequest, RetryLater
from skitter.http import Request, Response
from skitter.testing import refused_port

from ..conftest import MakeDownloader, MemoryStats

ROBOTS = b"""
User-agent: *
Disallow: /private
Crawl-delay: 2

User-agent: special-bot
Disallow: /
"""

ROBOTS_HITS = web.AppKey("robots_hits", list[str])
ROBOTS_ASKED = web.AppKey("robots_asked", asyncio.Event)
SITE = {"ROBOTSTXT_OBEY": True}


def site(
    robots_status: int = 200, robots_body: bytes = ROBOTS, hang_first: bool = False
) -> web.Application:
    """A site whose robots.txt answers ``robots_status``; with ``hang_first`` the first
    robots.txt request hangs until the client goes away."""

    async def robots(request: web.Request) -> web.Response:
        hits = request.app[ROBOTS_HITS]
        hits.append(request.headers.get("User-Agent", ""))
        request.app[ROBOTS_ASKED].set()
        if hang_first and len(hits) == 1:
            # aiohttp has no "client went away" event for a handler: poll for it.
            while request.transport is not None and not request.transport.is_closing():  # noqa: ASYNC110
                await asyncio.sleep(0.01)  # polls a real socket for the client going away
        return web.Response(status=robots_status, body=robots_body)

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=f"page {request.path}")

    app = web.Application()
    app[ROBOTS_HITS] = []
    app[ROBOTS_ASKED] = asyncio.Event()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/{tail:.*}", page)
    return app


Serve = Callable[[web.Application], Awaitable[str]]


async def test_allowed_and_disallowed(serve: Serve, make_downloader: MakeDownloader) -> None:
    app = site()
    base = await serve(app)
    downloader = await make_downloader(SITE)
    response = await downloader.fetch(Request(f"{base}/public"))
    assert isinstance(response, Response)
    assert response.text == "page /public"
    request = Request(f"{base}/private/x")
    with pytest.raises(IgnoreRequest, match=r"forbidden by robots\.txt") as info:
        await downloader.fetch(request)
    assert info.value.request is request
    stats: MemoryStats = downloader.crawler.stats  # type: ignore[assignment]
    assert stats.values["robotstxt/forbidden"] == 1
    assert stats.values["robotstxt/request_count"] == 1
    assert stats.values["robotstxt/response_status_count/200"] == 1
    assert app[ROBOTS_HITS] == ["skitter/0.1"]  # fetched once, with our User-Agent


async def test_concurrent_requests_wait_for_one_fetch(
    serve: Serve, make_downloader: MakeDownloader
) -> None:
    app = site()
    base = await serve(app)
    downloader = await make_downloader(SITE)
    results = await asyncio.gather(
        *(downloader.fetch(Request(f"{base}/p{i}")) for i in range(10)),
        downloader.fetch(Request(f"{base}/private")),
        return_exceptions=True,
    )
    assert all(isinstance(r, Response) for r in results[:10])
    assert isinstance(results[10], IgnoreRequest)
    assert len(app[ROBOTS_HITS]) == 1


async def test_user_agent_groups_are_matched(serve: Serve, make_downloader: MakeDownloader) -> None:
    base = await serve(site())
    downloader = await make_downloader({**SITE, "ROBOTSTXT_USER_AGENT": "special-bot"})
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"{base}/public"))


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_4xx_robots_allows_everything(
    status: int, serve: Serve, make_downloader: MakeDownloader
) -> None:
    base = await serve(site(robots_status=status))
    downloader = await make_downloader(SITE)
    response = await downloader.fetch(Request(f"{base}/private"))
    assert isinstance(response, Response)
    assert response.status == 200


async def test_5xx_robots_allows_everything_with_a_warning(
    serve: Serve, make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    base = await serve(site(robots_status=500))
    downloader = await make_downloader(SITE)
    with caplog.at_level(logging.WARNING, logger="skitter.downloader.robotstxt"):
        response = await downloader.fetch(Request(f"{base}/private"))
    assert isinstance(response, Response)
    assert response.status == 200
    assert any("HTTP 500" in r.getMessage() for r in caplog.records)


async def test_unreachable_robots_allows_everything_with_a_warning(
    make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    port = refused_port()
    downloader = await make_downloader(SITE)
    robots = downloader.middleware(RobotsTxtMiddleware)
    # robots.txt fails to connect (so all is allowed), then the request itself fails.
    with (
        caplog.at_level(logging.WARNING, logger="skitter.downloader.robotstxt"),
        pytest.raises(RetryLater, match="ConnectError"),
    ):
        await downloader.fetch(Request(f"http://127.0.0.1:{port}/page"))
    assert any("cannot download" in r.getMessage() for r in caplog.records)
    assert robots.crawl_delay("127.0.0.1") is None
    stats: MemoryStats = downloader.crawler.stats  # type: ignore[assignment]
    assert stats.values["robotstxt/exception_count/ConnectError"] == 1


async def test_garbage_robots_is_read_leniently(
    serve: Serve, make_downloader: MakeDownloader
) -> None:
    base = await serve(site(robots_body=b"\xff\xfe<html>not robots</html>\x00"))
    downloader = await make_downloader(SITE)
    response = await downloader.fetch(Request(f"{base}/private"))
    assert isinstance(response, Response)


async def test_robots_redirect_is_followed(serve: Serve, make_downloader: MakeDownloader) -> None:
    target = await serve(site())

    async def moved(request: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": f"{target}/robots.txt"})

    app = web.Application()
    app.router.add_get("/robots.txt", moved)
    app.router.add_get("/{tail:.*}", moved)
    base = await serve(app)
    downloader = await make_downloader(SITE)
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"{base}/private"))


async def test_crawl_delay_and_opt_out(serve: Serve, make_downloader: MakeDownloader) -> None:
    base = await serve(site())
    downloader = await make_downloader(SITE)
    robots = downloader.middleware(RobotsTxtMiddleware)
    assert robots.crawl_delay("127.0.0.1") is None  # not read yet
    response = await downloader.fetch(
        Request(f"{base}/private", meta={"dont_obey_robotstxt": True})
    )
    assert isinstance(response, Response)
    assert robots.crawl_delay("127.0.0.1") is None  # the opt-out did not read it
    await downloader.fetch(Request(f"{base}/public"))
    assert robots.crawl_delay("127.0.0.1") == 2.0


async def test_off_by_default(serve: Serve, make_downloader: MakeDownloader) -> None:
    app = site()
    base = await serve(app)
    downloader = await make_downloader()
    assert downloader.middleware(RobotsTxtMiddleware) is None
    response = await downloader.fetch(Request(f"{base}/private"))
    assert isinstance(response, Response)
    assert app[ROBOTS_HITS] == []


async def test_a_cancelled_fetch_lets_the_next_request_fetch_again(
    serve: Serve, make_downloader: MakeDownloader
) -> None:
    app = site(hang_first=True)
    base = await serve(app)
    downloader = await make_downloader(SITE)
    first = asyncio.ensure_future(downloader.fetch(Request(f"{base}/a")))
    waiter = asyncio.ensure_future(downloader.fetch(Request(f"{base}/private")))
    await app[ROBOTS_ASKED].wait()  # the first request's robots.txt fetch is at the server
    first.cancel()
    with pytest.raises(IgnoreRequest):
        await waiter  # it fetched robots.txt itself instead of hanging
    assert first.cancelled()
    assert len(app[ROBOTS_HITS]) == 2
