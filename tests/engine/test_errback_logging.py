"""A download error the spider's errback handles is the spider's business, not an ERROR
in the crawl's log (as in Scrapy); without an errback it stays an ERROR (issue 19)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.testing import refused_port

# Its one start request fails: the crawl's own verdict on that is not the subject here.
FAST = {"RETRY_DELAYS": [0.0], "RETRY_TIMES": 1, "FAIL_WHEN_NO_START_SUCCEEDS": False}


def closed_port_url() -> str:
    return f"http://127.0.0.1:{refused_port()}/down"


async def server_error_url(serve: Any) -> str:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(status=500, text="down")

    app = web.Application()
    app.router.add_get("/down", handle)
    return await serve(app) + "/down"


@pytest.mark.parametrize("failure", ["refused", "http 500"])
@pytest.mark.parametrize("with_errback", [True, False])
async def test_an_error_handled_by_an_errback_is_not_logged_as_error(
    serve: Any, caplog: pytest.LogCaptureFixture, failure: str, with_errback: bool
) -> None:
    url = closed_port_url() if failure == "refused" else await server_error_url(serve)
    handled: list[Any] = []

    class Failing(Spider):
        name = "failing"

        def start_requests(self) -> Any:
            yield Request(url, errback=self.failed if with_errback else None)

        def failed(self, failure: Any) -> None:
            handled.append(failure)

    with caplog.at_level(logging.DEBUG):
        await Crawler(Failing, FAST).run()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    if with_errback:
        assert len(handled) == 1
        assert errors == [], [r.getMessage() for r in errors]
        # still there for whoever asks for DEBUG
        assert any(url in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    else:
        assert [r.name for r in errors] == ["skitter.engine"], [r.getMessage() for r in errors]
