"""RETRY_GIVE_UP_LOG_LEVEL: the "Gave up retrying" line at the level a project asks for,
from the scheduler's own retries and from ``get_retry_request``; real crawls against a
local server and a closed port."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.downloader.wiring import give_up_level
from skitter.downloadermiddlewares.retry import get_retry_request
from skitter.exceptions import ConfigError
from skitter.testing import refused_port
from skitter.utils.test import get_crawler

FAST = {"RETRY_DELAYS": [0.0], "RETRY_TIMES": 0}


def gave_up(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if r.getMessage().startswith("Gave up retrying")
    ]


@pytest.mark.parametrize(("level", "expected"), [(None, logging.ERROR), ("warning", 30), (20, 20)])
async def test_the_schedulers_give_up_line_takes_the_level(
    caplog: pytest.LogCaptureFixture, level: Any, expected: int
) -> None:
    refused = f"http://127.0.0.1:{refused_port()}/"

    class Refused(Spider):
        name = "refused"
        start_urls = [refused]

    settings: dict[str, Any] = {**FAST, "FAIL_WHEN_NO_START_SUCCEEDS": False}
    if level is not None:
        settings["RETRY_GIVE_UP_LOG_LEVEL"] = level
    with caplog.at_level(logging.DEBUG):
        await Crawler(Refused, settings).run()
    ((levelno, message),) = gave_up(caplog)
    assert levelno == expected
    assert message.startswith(f"Gave up retrying <GET {refused}> (failed once)")


async def test_get_retry_request_gives_up_at_the_level(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>captcha</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    base = await serve(app)

    class Captcha(Spider):
        name = "captcha"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            retry = get_retry_request(response.request, spider=self, reason="captcha")
            if retry is not None:
                yield retry

    with caplog.at_level(logging.DEBUG):
        stats = await Crawler(Captcha, {**FAST, "RETRY_GIVE_UP_LOG_LEVEL": "INFO"}).run()
    assert stats["retry/max_reached"] == 1
    ((levelno, message),) = gave_up(caplog)
    assert (levelno, message) == (
        logging.INFO,
        # Scrapy's function, Scrapy's line (the scheduler's own says "failed once").
        f"Gave up retrying <GET {base}/> (failed 1 times): captcha",
    )


async def test_a_level_that_is_no_level_is_refused() -> None:
    class Quiet(Spider):
        name = "quiet"
        start_urls: list[str] = []

    with pytest.raises(ConfigError, match="RETRY_GIVE_UP_LOG_LEVEL 'LOUD'"):
        await Crawler(Quiet, {"RETRY_GIVE_UP_LOG_LEVEL": "LOUD"}).run()


@pytest.mark.parametrize(
    ("value", "level"), [("ERROR", 40), ("critical", 50), (" Debug ", 10), ("25", 25), (5, 5)]
)
def test_give_up_level_reads_names_and_numbers(value: object, level: int) -> None:
    assert give_up_level(value) == level


@pytest.mark.parametrize("value", ["LOUD", "", None, True, 2.5])
def test_give_up_level_refuses_the_rest(value: object) -> None:
    with pytest.raises(ConfigError, match="RETRY_GIVE_UP_LOG_LEVEL"):
        give_up_level(value)


def test_get_retry_request_takes_scrapys_give_up_log_level_argument(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spider = get_crawler(Spider, {"RETRY_TIMES": 0})._create_spider("s")
    request = Request("http://127.0.0.1/")
    with caplog.at_level(logging.DEBUG):
        assert get_retry_request(request, spider=spider, give_up_log_level="WARNING") is None
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, f"Gave up retrying {request} (failed 1 times): unspecified")
    ]
    with pytest.raises(ValueError, match="give_up_log_level"):
        get_retry_request(request, spider=spider, give_up_log_level="LOUD")
