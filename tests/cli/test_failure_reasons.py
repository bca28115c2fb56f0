"""A crawl's download failures name their cause everywhere a person looks (issue 27,
item 11): the "Gave up retrying" line, the stats, the dashboard's failures and failed
tasks, and ``skitter job``. Real failures on 127.0.0.1: a closed port, and an https://
request to a port that speaks plain HTTP."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.dashboard._views import project_detail
from skitter.testing import refused_port

from ._cli import run_cli

REFUSED = "ConnectError: cannot connect: Connection refused"
PLAIN = "is this port plain HTTP?"


async def site(serve: Any) -> int:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>ok</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    return int((await serve(app)).rsplit(":", 1)[1])


def spider_for(urls: list[str]) -> type[Spider]:
    class Failing(Spider):
        name = "failing"

        def start_requests(self) -> Any:
            for url in urls:
                yield Request(url)

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    return Failing


async def failing_crawl(serve: Any, retries: int, **kwargs: Any) -> tuple[Crawler, str, str]:
    """A crawl of a good page, a closed port and https:// to a plain-HTTP port; the
    crawler (run) and the two failing URLs."""
    port = await site(serve)
    refused = f"http://127.0.0.1:{refused_port()}/"
    tls = f"https://127.0.0.1:{port}/"
    urls = [f"http://127.0.0.1:{port}/", refused, tls]
    crawler = Crawler(spider_for(urls), {"RETRY_TIMES": retries, "RETRY_DELAYS": [0.0]}, **kwargs)
    await crawler.run()
    return crawler, refused, tls


@pytest.mark.parametrize("retries", [0, 2])
async def test_the_log_the_stats_and_the_dashboard_name_the_cause(
    serve: Any, caplog: pytest.LogCaptureFixture, retries: int
) -> None:
    with caplog.at_level(logging.INFO):
        crawler, refused, tls = await failing_crawl(serve, retries)
    stats = crawler.stats.to_dict()

    # the log line, with its grammar
    times = "failed once" if retries == 0 else f"failed {retries + 1} times"
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert f"Gave up retrying <GET {refused}> ({times}): {REFUSED}" in lines, lines
    (tls_line,) = [line for line in lines if tls in line]
    assert f"({times}): ConnectError: TLS handshake failed: " in tls_line
    assert "WRONG_VERSION_NUMBER" in tls_line and PLAIN in tls_line

    # the stats: by class, as before, and by cause under it
    assert stats["engine/failed_requests/ConnectError"] == 2
    assert stats["engine/failed_requests/ConnectError/Connection refused"] == 1
    assert stats["downloader/exception_type_count/ConnectError/Connection refused"] == retries + 1
    tls_keys = [k for k in stats if k.startswith("engine/failed_requests/ConnectError/[SSL")]
    assert len(tls_keys) == 1 and "WRONG_VERSION_NUMBER" in tls_keys[0]
    assert stats.get("retry/reason_count/ConnectError", 0) == 2 * retries

    # the dashboard: recent failures and failed tasks
    detail = await project_detail(crawler.control)
    failures = {f["url"]: f["reason"] for f in detail["failures"]}
    assert failures[refused] == REFUSED
    assert PLAIN in failures[tls]
    failed = {t["url"]: t["reason"] for t in detail["failed_tasks"]}
    assert failed[refused] == REFUSED
    assert PLAIN in failed[tls]


async def test_skitter_job_names_the_cause(serve: Any, tmp_path: Path) -> None:
    await failing_crawl(serve, 1, job_dir=tmp_path / "job")
    code, out, err = await run_cli(
        "job", str(tmp_path / "job"), cwd=tmp_path, env={"COLUMNS": "400"}
    )
    assert code == 0, err
    shown = " ".join((out + err).split())  # the table may wrap a long reason
    assert REFUSED in shown
    assert PLAIN in shown


async def test_an_error_without_retries_is_one_line_naming_the_request_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused = f"http://127.0.0.1:{refused_port()}/"
    with caplog.at_level(logging.INFO):
        settings = {"RETRY_ENABLED": False, "FAIL_WHEN_NO_START_SUCCEEDS": False}
        await Crawler(spider_for([refused]), settings).run()
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert f"Error downloading <GET {refused}>: {REFUSED}" in lines, lines
