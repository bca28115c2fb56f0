"""DOWNLOAD_HANDLERS: Scrapy's per-scheme handlers merged over skitter's routing; the
network is not the subject, so HTTP is a MockTransport and Chromium a recorder."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from skitter import Request, Response
from skitter.downloader import Downloader
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.testing import MockTransport

from .conftest import make_context

PLAYWRIGHT = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"


class Recorder:
    """Stands in for the browser transport: records what reached it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def fetch(self, request: Request) -> Response:
        self.seen.append(request.url)
        return Response(request.url, 200, body=b"rendered", request=request)


def over_http(request: Request) -> bytes:
    return b"http"


def downloader(settings: dict[str, Any], browser: Recorder | None = None) -> Downloader:
    return Downloader(
        make_context(settings), None, transport=MockTransport(over_http), browser=browser
    )


async def test_scrapy_playwright_requests_are_rendered_the_others_go_over_http(
    caplog: pytest.LogCaptureFixture,
) -> None:
    browser = Recorder()
    settings = {"DOWNLOAD_HANDLERS": {"http": PLAYWRIGHT, "https": PLAYWRIGHT}}
    with caplog.at_level(logging.INFO, logger="skitter.downloader"):
        built = downloader(settings, browser)
    assert "scrapy-playwright's handler for http and https" in caplog.text
    async with built as dl:
        rendered = await dl.fetch(Request("https://a.test/js", meta={"playwright": True}))
        plain = await dl.fetch(Request("https://a.test/plain"))
        off = await dl.fetch(Request("https://a.test/off", meta={"playwright": False}))
    assert browser.seen == ["https://a.test/js"]
    assert isinstance(rendered, Response) and rendered.body == b"rendered"
    assert isinstance(plain, Response) and plain.body == b"http"
    assert isinstance(off, Response) and off.body == b"http"


async def test_meta_playwright_alone_renders_nothing() -> None:
    browser = Recorder()
    async with downloader({}, browser) as dl:
        await dl.fetch(Request("https://a.test/js", meta={"playwright": True}))
    assert browser.seen == []


async def test_none_switches_a_scheme_off() -> None:
    async with downloader({"DOWNLOAD_HANDLERS": {"data": None}}) as dl:
        with pytest.raises(IgnoreRequest, match="switched off by DOWNLOAD_HANDLERS"):
            await dl.fetch(Request("data:,hello"))
        response = await dl.fetch(Request("https://a.test/"))
    assert isinstance(response, Response) and response.body == b"http"


@pytest.mark.parametrize(
    "handlers",
    [
        {"https": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"},
        {"data": "scrapy.core.downloader.handlers.datauri.DataURIDownloadHandler"},
        {"ftp": None, "s3": None},
    ],
)
async def test_scrapys_own_handlers_and_switching_off_are_accepted(handlers: Any) -> None:
    async with downloader({"DOWNLOAD_HANDLERS": handlers}) as dl:
        response = await dl.fetch(Request("https://a.test/"))
    assert isinstance(response, Response)


@pytest.mark.parametrize(
    ("handlers", "message"),
    [
        ({"https": "myproject.handlers.Custom"}, "handlers of Scrapy's API are not supported"),
        ({"ftp": "scrapy.core.downloader.handlers.ftp.FTPDownloadHandler"}, "http\\(s\\)"),
        ({"data": PLAYWRIGHT}, "data: and file: only|not supported"),
    ],
)
def test_handlers_skitter_cannot_run_are_refused_at_start(handlers: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        downloader({"DOWNLOAD_HANDLERS": handlers})
