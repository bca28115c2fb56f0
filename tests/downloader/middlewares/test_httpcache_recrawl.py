"""Conditional recrawl end to end: a task recrawled by ``age`` or ``auto_recrawl`` sends
its last validators, and a 304 is an unchanged page (memory and SQLite frontiers)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import ConfigError, Crawler, Request, Response, Spider

from ..conftest import FAST


class Site:
    """``/page`` has an ETag and a Last-Modified date and answers a matching condition
    with 304; ``/hub`` links back to it. Counts requests, and conditional ones."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.conditional: list[tuple[str | None, str | None]] = []
        self.etag = '"one"'
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] += 1
        if request.path == "/hub":
            return web.Response(text="hub")
        asked = (request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since"))
        if asked != (None, None):
            self.conditional.append(asked)
        headers = {"ETag": self.etag, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
        if asked[0] == self.etag:
            return web.Response(status=304, headers=headers)
        return web.Response(text=f"page {self.etag}", headers=headers)


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    s = Site()
    return s, await serve(s.app)


async def test_a_recrawl_by_age_sends_the_validators_and_304_is_unchanged(
    site: tuple[Site, str], caplog: pytest.LogCaptureFixture
) -> None:
    server, base = site
    seen: list[tuple[int, list[str]]] = []
    errors: list[Any] = []

    class Again(Spider):
        name = "again"

        async def start(self) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0, errback=errors.append)

        def parse_page(self, response: Response) -> Any:
            seen.append((response.status, response.flags))
            yield Request(f"{base}/hub", self.parse_hub)

        def parse_hub(self, response: Response) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0, errback=errors.append)

    with caplog.at_level("INFO"):
        stats = await Crawler(Again, FAST).run()
    assert server.hits["/page"] == 2
    assert server.conditional == [('"one"', "Tue, 01 Dec 2026 10:00:00 GMT")]
    assert stats["recrawl/unchanged"] == 1
    assert seen == [(200, [])]  # the callback did not run on the unchanged page
    assert errors == []  # nor the errback: nothing failed
    assert "Ignoring response" not in caplog.text  # an unchanged page is no ignored error


async def test_a_task_without_age_sends_no_validators(site: tuple[Site, str]) -> None:
    server, base = site

    class Forced(Spider):
        name = "forced"

        async def start(self) -> Any:
            yield Request(f"{base}/page", self.parse)

        def parse(self, response: Response) -> Any:
            if response.request.meta.get("again") is None:
                yield Request(f"{base}/page", dont_filter=True, meta={"again": 1})

    await Crawler(Forced, FAST).run()
    assert server.hits["/page"] == 2 and server.conditional == []


@pytest.mark.parametrize("frontier", ["memory", "sqlite"])
async def test_auto_recrawl_reschedules_unchanged_pages_by_age(
    site: tuple[Site, str], tmp_path: Path, frontier: str
) -> None:
    server, base = site
    seen: list[tuple[int, list[str]]] = []

    class Watch(Spider):
        name = "watch"
        handle_httpstatus_list = (304,)  # this spider asks to see unchanged pages

        async def start(self) -> Any:
            yield Request(f"{base}/page", age=0.05, auto_recrawl=True)

        def parse(self, response: Response) -> Any:
            seen.append((response.status, list(response.flags)))
            return ()

    settings = {**FAST, "CLOSESPIDER_PAGECOUNT": 3}
    job_dir = tmp_path / "job" if frontier == "sqlite" else None
    stats = await Crawler(Watch, settings, job_dir=job_dir).run()
    assert seen[0] == (200, [])
    assert seen[1:3] == [(304, ["unchanged"]), (304, ["unchanged"])]
    assert stats["recrawl/unchanged"] >= 2 and len(server.conditional) >= 2


@pytest.mark.parametrize("mode", ["recrawl", "fresh"])
async def test_job_dir_keeps_the_validators_for_the_next_run(
    site: tuple[Site, str], tmp_path: Path, mode: str
) -> None:
    server, base = site
    calls: list[int] = []

    class Job(Spider):
        name = "job"

        async def start(self) -> Any:
            yield Request(f"{base}/page", age=3600)

        def parse(self, response: Response) -> Any:
            calls.append(response.status)
            return ()

    job = tmp_path / "job"
    await Crawler(Job, FAST, job_dir=job).run()
    assert (job / "validators.sqlite3").exists()
    stats = await Crawler(Job, FAST, job_dir=job, job_mode=mode).run()
    assert server.hits["/page"] == 2
    if mode == "recrawl":  # every finished task again: each asks "changed since?"
        assert len(server.conditional) == 1 and stats["recrawl/unchanged"] == 1
        assert calls == [200]
    else:  # a fresh job forgets what it saw: every page whole
        assert server.conditional == [] and "recrawl/unchanged" not in stats
        assert calls == [200, 200]


async def test_a_changed_page_is_crawled_whole_and_its_new_validators_kept(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    bodies: list[bytes] = []

    class Job(Spider):
        name = "job"

        async def start(self) -> Any:
            yield Request(f"{base}/page", age=3600)

        def parse(self, response: Response) -> Any:
            bodies.append(response.body)
            return ()

    job = tmp_path / "job"
    await Crawler(Job, FAST, job_dir=job).run()
    server.etag = '"two"'
    await Crawler(Job, FAST, job_dir=job, job_mode="recrawl").run()
    await Crawler(Job, FAST, job_dir=job, job_mode="recrawl").run()
    assert bodies == [b'page "one"', b'page "two"']
    assert [etag for etag, _ in server.conditional] == ['"one"', '"two"']


async def test_switched_off(site: tuple[Site, str]) -> None:
    server, base = site

    class Again(Spider):
        name = "again"

        async def start(self) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)

        def parse_page(self, response: Response) -> Any:
            yield Request(f"{base}/hub", self.parse_hub)

        def parse_hub(self, response: Response) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)

    await Crawler(Again, {**FAST, "RECRAWL_CONDITIONAL": False}).run()
    assert server.hits["/page"] == 2 and server.conditional == []


async def test_a_damaged_validators_file_is_a_clear_error(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "validators.sqlite3").write_bytes(b"not a database" * 100)

    class Job(Spider):
        name = "job"
        start_urls = ["http://127.0.0.1:1/"]

    with pytest.raises(ConfigError, match=r"validators\.sqlite3 cannot be read"):
        await Crawler(Job, FAST, job_dir=job).run()
