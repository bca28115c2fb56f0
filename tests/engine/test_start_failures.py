"""A crawl none of whose start requests got a response the spider accepted (issue 27,
item 12) ends with a WARNING naming them and their causes, and fails (exit 1) unless
FAIL_WHEN_NO_START_SUCCEEDS is off; one start request accepted is enough, and a resumed
job whose start requests were queued by an earlier run is not judged again. Real
servers and a closed port on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import CrawlFailed

FAST = {"RETRY_TIMES": 0, "CONCURRENT_REQUESTS": 4}


def closed_url() -> str:
    with socket.socket() as sock:  # bound then closed: connections to it are refused
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/"


async def site(serve: Any) -> str:
    """/ok is a page linking to /next; /next is a page; /gone is a 404; /moved redirects
    to /ok."""

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text='<a href="/next">next</a>', content_type="text/html")

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=404, text="gone")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/ok")

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/next", ok)
    app.router.add_get("/gone", gone)
    app.router.add_get("/moved", moved)
    return str(await serve(app))


def spider_of(urls: list[str], follow: str | None = None, stop: bool = False) -> type[Spider]:
    """Start requests to ``urls``; a start page links to ``follow``. With ``stop``, the
    crawl is stopped (as by Ctrl-C) before that link is queued: it is left for a resume."""

    class Starts(Spider):
        name = "starts"

        def start_requests(self) -> Any:
            for url in urls:
                yield Request(url)

        def parse(self, response: Response) -> Any:
            yield {"url": response.url, "start": response.meta.get("is_start_request")}
            if follow is not None and response.meta.get("is_start_request"):
                if stop:
                    self.crawler.stop()
                yield Request(follow)

    return Starts


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def test_every_start_request_failing_fails_the_crawl_naming_each_cause(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    base = await site(serve)
    refused, gone = closed_url(), f"{base}/gone"
    with caplog.at_level(logging.WARNING), pytest.raises(CrawlFailed) as info:
        await Crawler(spider_of([refused, gone]), FAST).run()
    assert "not one of its 2 start requests got a response it accepted" in info.value.reason
    assert info.value.stats["finish_reason"] == "failed"
    (warning,) = [w for w in warnings(caplog) if "start requests" in w]
    assert f"{refused}: ConnectError: cannot connect: Connection refused" in warning
    assert f"{gone}: HTTP 404: a status the spider does not handle" in warning
    assert info.value.stats["start_requests/refused"] == 2
    assert "start_requests/accepted" not in info.value.stats


async def test_the_setting_turns_the_failure_off_but_not_the_warning(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    base = await site(serve)
    settings = {**FAST, "FAIL_WHEN_NO_START_SUCCEEDS": False}
    with caplog.at_level(logging.WARNING):
        stats = await Crawler(spider_of([f"{base}/gone"]), settings).run()
    assert stats["finish_reason"] == "finished"
    assert any(f"{base}/gone: HTTP 404" in w for w in warnings(caplog))


@pytest.mark.parametrize("good", ["/ok", "/moved"])
async def test_one_start_request_accepted_is_enough(
    serve: Any, caplog: pytest.LogCaptureFixture, good: str
) -> None:
    base = await site(serve)
    with caplog.at_level(logging.WARNING):
        stats = await Crawler(spider_of([closed_url(), f"{base}{good}"]), FAST).run()
    assert stats["finish_reason"] == "finished"
    assert stats["start_requests/accepted"] == 1
    assert not [w for w in warnings(caplog) if "start requests" in w]


async def test_a_spider_without_start_requests_is_not_judged() -> None:
    class Empty(Spider):
        name = "empty"

        async def start(self) -> Any:
            yield {"only": "an item"}

    stats = await Crawler(Empty, FAST).run()
    assert stats["finish_reason"] == "finished"


async def test_start_requests_are_marked_as_scrapy_marks_them(serve: Any) -> None:
    base = await site(serve)
    seen: list[Any] = []

    class Pipeline:
        def process_item(self, item: Any, spider: Any) -> Any:
            seen.append(item)
            return item

    settings = {**FAST, "ITEM_PIPELINES": {Pipeline(): 100}}
    await Crawler(spider_of([f"{base}/ok"], follow=f"{base}/next"), settings).run()
    assert sorted((i["url"].rsplit("/", 1)[1], i["start"]) for i in seen) == [
        ("next", None),
        ("ok", True),
    ]


async def test_a_resumed_job_whose_starts_ran_before_is_not_failed(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Run 1 crawls its one start request (accepted) and stops before its follow-up;
    run 2 resumes with only that follow-up, which fails: the crawl did what the start
    requests asked, in its first run."""
    base = await site(serve)
    follow = closed_url()
    first = await Crawler(
        spider_of([f"{base}/ok"], follow, stop=True), FAST, job_dir=tmp_path / "job"
    ).run()
    assert first["finish_reason"] == "shutdown"
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        second = await Crawler(
            spider_of([f"{base}/ok"], follow), FAST, job_dir=tmp_path / "job"
        ).run()
    assert any("Gave up retrying" in r.getMessage() for r in caplog.records)  # run 2 ran it
    assert second["finish_reason"] == "finished"
    assert second["engine/failed_requests/ConnectError"] == 1  # the follow-up failed
    assert not [w for w in warnings(caplog) if "start requests" in w]


async def test_a_fresh_job_whose_starts_all_fail_fails(serve: Any, tmp_path: Path) -> None:
    with pytest.raises(CrawlFailed, match="its start request got no response it accepted"):
        await Crawler(spider_of([closed_url()]), FAST, job_dir=tmp_path / "job").run()
