"""RetryMiddleware: it converts failures into RetryLater and never retries by itself."""

from __future__ import annotations

import asyncio
from email.utils import formatdate

import pytest
from aiohttp import web

from skitter.exceptions import ConnectError, DownloadTimeout, InvalidURL, RetryLater
from skitter.http import Request, Response
from skitter.testing import refused_port

from ..conftest import MakeDownloader

HITS = web.AppKey("hits", list[str])


async def status(request: web.Request) -> web.Response:
    headers = {}
    if "retry_after" in request.query:
        headers["Retry-After"] = request.query["retry_after"]
    request.app[HITS].append(request.path)
    return web.Response(status=int(request.match_info["n"]), headers=headers)


@pytest.fixture
async def app() -> web.Application:
    app = web.Application()
    app[HITS] = []
    app.router.add_get("/status/{n}", status)
    return app


@pytest.fixture
async def base(serve, app: web.Application) -> str:  # type: ignore[no-untyped-def]
    return await serve(app)


async def test_retryable_status_raises_retry_later_once(
    base: str, app: web.Application, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    request = Request(f"{base}/status/503")
    with pytest.raises(RetryLater) as info:
        await downloader.fetch(request)
    retry = info.value
    assert retry.reason == "HTTP 503"
    assert retry.request is request
    assert retry.response is not None
    assert retry.response.status == 503
    assert retry.delay is None
    assert app[HITS] == ["/status/503"]  # the middleware itself never tries again


async def test_retry_after_seconds(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    with pytest.raises(RetryLater) as info:
        await downloader.fetch(Request(f"{base}/status/429?retry_after=7"))
    assert info.value.delay == 7.0


async def test_retry_after_http_date(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    now = downloader.crawler.clock.time()  # a FakeClock: the date is exact
    date = formatdate(now + 30, usegmt=True)
    with pytest.raises(RetryLater) as info:
        await downloader.fetch(Request(f"{base}/status/503?retry_after={date}"))
    assert info.value.delay == pytest.approx(30.0)


@pytest.mark.parametrize("code", [200, 404])
async def test_other_statuses_pass(code: int, base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    result = await downloader.fetch(Request(f"{base}/status/{code}"))
    assert isinstance(result, Response)
    assert result.status == code


async def test_retry_http_codes_setting(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader({"RETRY_HTTP_CODES": [404]})
    with pytest.raises(RetryLater, match="HTTP 404"):
        await downloader.fetch(Request(f"{base}/status/404"))
    result = await downloader.fetch(Request(f"{base}/status/503"))
    assert isinstance(result, Response)
    assert result.status == 503


async def test_dont_retry_returns_the_response(base: str, make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    result = await downloader.fetch(Request(f"{base}/status/503", meta={"dont_retry": True}))
    assert isinstance(result, Response)
    assert result.status == 503


async def test_network_errors_become_retry_later_with_the_cause(
    make_downloader: MakeDownloader,
) -> None:
    downloader = await make_downloader()
    request = Request(f"http://127.0.0.1:{refused_port()}/")
    with pytest.raises(RetryLater) as info:
        await downloader.fetch(request)
    assert info.value.reason == "ConnectError"
    assert isinstance(info.value.cause, ConnectError)
    assert info.value.request is request


async def test_timeouts_become_retry_later(serve, make_downloader: MakeDownloader) -> None:  # type: ignore[no-untyped-def]
    async def slow(request: web.Request) -> web.Response:
        for _ in range(100):  # until the client gives up
            if request.transport is None or request.transport.is_closing():
                break
            # polls a real socket: aiohttp tells no handler that the client went
            await asyncio.sleep(0.02)
        return web.Response()

    app = web.Application()
    app.router.add_get("/", slow)
    base = await serve(app)
    downloader = await make_downloader()
    with pytest.raises(RetryLater) as info:
        await downloader.fetch(Request(f"{base}/", meta={"download_timeout": 0.1}))
    assert isinstance(info.value.cause, DownloadTimeout)


async def test_errors_that_would_repeat_are_not_retried(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    with pytest.raises(InvalidURL):
        await downloader.fetch(Request("ftp://127.0.0.1/file"))


async def test_disabled_retries_let_everything_through(
    base: str, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"RETRY_ENABLED": False})
    result = await downloader.fetch(Request(f"{base}/status/503"))
    assert isinstance(result, Response)
    assert result.status == 503
    with pytest.raises(ConnectError):
        await downloader.fetch(Request(f"http://127.0.0.1:{refused_port()}/"))


async def test_retry_exceptions_choose_the_errors_retried(
    make_downloader: MakeDownloader,
) -> None:
    """RETRY_EXCEPTIONS: a refused connection is retried by default, not when the list
    names timeouts only; Scrapy's own (Twisted) names keep their meaning."""
    request = Request(f"http://127.0.0.1:{refused_port()}/")
    only_timeouts = await make_downloader(
        {"RETRY_EXCEPTIONS": ["skitter.exceptions.DownloadTimeout"]}
    )
    with pytest.raises(ConnectError):  # not retryable: raised as it is
        await only_timeouts.fetch(request)
    scrapy_list = [
        "twisted.internet.defer.TimeoutError",
        "twisted.internet.error.ConnectionRefusedError",
        "twisted.internet.error.DNSLookupError",
        "twisted.web.client.ResponseFailed",
        "IOError",
    ]
    ported = await make_downloader({"RETRY_EXCEPTIONS": scrapy_list})
    with pytest.raises(RetryLater, match="ConnectError"):
        await ported.fetch(request)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # a module no machine has (twisted is there wherever Scrapy is installed)
        (["notinstalled.internet.error.NoSuchError"], "cannot import 'notinstalled.internet"),
        (["skitter.exceptions.SCRAPY_NAMES"], "no 'SCRAPY_NAMES'"),
        (["skitter.http.Request"], "is not an exception class"),
    ],
)
async def test_retry_exceptions_that_name_no_exception_stop_the_crawl(
    make_downloader: MakeDownloader, value: list[str], message: str
) -> None:
    from skitter.exceptions import ConfigError

    with pytest.raises(ConfigError, match=message):
        await make_downloader({"RETRY_EXCEPTIONS": value})


def test_a_plugin_subclass_builds_it_from_the_settings_as_in_scrapy() -> None:
    """scrapy-fake-useragent's RetryUserAgentMiddleware calls
    ``RetryMiddleware.__init__(self, crawler.settings)``."""
    from skitter.downloadermiddlewares.retry import RetryMiddleware
    from skitter.settings import Settings

    class RetryWithOwnHeader(RetryMiddleware):
        def __init__(self, settings: Settings) -> None:
            RetryMiddleware.__init__(self, settings)

    settings = Settings({"RETRY_HTTP_CODES": [503, 429], "RETRY_EXCEPTIONS": [DownloadTimeout]})
    middleware = RetryWithOwnHeader(settings)
    assert middleware.retry_http_codes == {503, 429}
    assert (DownloadTimeout,) == middleware.EXCEPTIONS_TO_RETRY
    with pytest.raises(RetryLater):
        middleware.process_response(
            Request("http://a.example/"), Response("http://a.example/", status=503)
        )
    assert (
        middleware.process_response(
            Request("http://a.example/"), ok := Response("http://a.example/", status=200)
        )
        is ok
    )
