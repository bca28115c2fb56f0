"""``Downloader.download``: each download leaves a ``DownloadReport`` for its slot,
whatever its end (a response, a redirect, a retry, an error), before that end goes on."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter._clock import FakeClock
from skitter._types import DownloadReport
from skitter.exceptions import ConnectError, RetryLater
from skitter.http import Request, Response

from .conftest import MakeDownloader


class Answers:
    """Answers every request itself, after ``seconds`` on the fake clock, as told."""

    clock: FakeClock
    seconds = 0.0
    answer: Any = None

    def process_request(self, request: Request, spider: Any) -> Any:
        self.clock.advance(self.seconds)
        answer = self.answer
        if isinstance(answer, Exception):
            raise answer
        return answer(request) if callable(answer) else answer


class Reports:
    def __init__(self) -> None:
        self.got: list[DownloadReport] = []

    async def __call__(self, report: DownloadReport) -> None:
        self.got.append(report)


async def answering(make_downloader: MakeDownloader, answer: Any, seconds: float = 0.0) -> Any:
    downloader = await make_downloader({"DOWNLOADER_MIDDLEWARES": {Answers: 50}})
    mw = downloader.middleware(Answers)
    mw.clock, mw.answer, mw.seconds = downloader.crawler.clock, answer, seconds
    return downloader


URL = "http://a.example/page"


async def test_a_response_reports_its_latency_and_status(make_downloader: MakeDownloader) -> None:
    downloader = await answering(
        make_downloader, lambda r: Response(r.url, 203, request=r), seconds=1.5
    )
    reports = Reports()
    result = await downloader.download(Request(URL), reports)
    assert isinstance(result, Response)
    assert reports.got == [DownloadReport(latency=1.5, status=203, ok=True)]


async def test_a_redirect_reports_success_without_a_status(make_downloader: MakeDownloader) -> None:
    downloader = await answering(make_downloader, Request("http://a.example/other"))
    reports = Reports()
    assert isinstance(await downloader.download(Request(URL), reports), Request)
    assert reports.got == [DownloadReport(latency=0.0, status=None, ok=True)]


async def test_retry_later_reports_its_status_and_delay_then_goes_on(
    make_downloader: MakeDownloader,
) -> None:
    throttled = RetryLater("429", response=Response(URL, 429, request=Request(URL)), delay=7.0)
    downloader = await answering(make_downloader, throttled, seconds=0.25)
    reports = Reports()
    with pytest.raises(RetryLater):
        await downloader.download(Request(URL), reports)
    assert reports.got == [DownloadReport(latency=0.25, status=429, retry_after=7.0, ok=False)]


async def test_an_error_reports_a_failure(make_downloader: MakeDownloader) -> None:
    downloader = await answering(make_downloader, ConnectError("refused"))
    reports = Reports()
    with pytest.raises(ConnectError):
        await downloader.download(Request(URL), reports)
    assert reports.got == [DownloadReport(latency=0.0, ok=False)]


@pytest.fixture
async def robots_site(serve) -> str:  # type: ignore[no-untyped-def]
    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 2\n")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/{tail:.*}", page)
    return await serve(app)


async def test_robots_txt_crawl_delay_is_reported_when_obeyed(
    robots_site: str, make_downloader: MakeDownloader
) -> None:
    obeying = await make_downloader({"ROBOTSTXT_OBEY": True})
    reports = Reports()
    await obeying.download(Request(f"{robots_site}/a"), reports)
    (report,) = reports.got
    assert (report.status, report.robots, report.crawl_delay) == (200, True, 2.0)

    ignoring = await make_downloader({"ROBOTSTXT_OBEY": False})
    reports = Reports()
    await ignoring.download(Request(f"{robots_site}/a"), reports)
    (report,) = reports.got
    assert (report.robots, report.crawl_delay) == (False, None)
