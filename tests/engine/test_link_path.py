"""A page's links through the crawl's own components (the path link_bench.py measures):
the cheaper joins and the lazy Referer keep every scheduling semantic (issue 18)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from skitter.crawler import Crawler
from skitter.engine._scraper import Scraper
from skitter.http import HtmlResponse, Request, Response
from skitter.spider import Spider

PAGE = "http://h.test/a/page.html"


class LinkSpider(Spider):
    name = "links"
    allowed_domains = ["h.test"]

    def parse(self, response: Response) -> Iterator[Request]:
        yield from response.follow_all(["../b/x.html", "./y.html#top", "http://other.test/z"])
        yield response.follow("../b/./x.html", priority=5)  # a duplicate, higher: merges
        yield response.follow("./y.html", dont_filter=True)  # a duplicate, yet queued


async def _handled(depth: int, settings: dict[str, Any]) -> Any:
    """The project after its spider handled one page at ``depth``."""
    crawler = Crawler(LinkSpider, settings={"LOG_LEVEL": "WARNING", **settings})
    project = crawler.build()

    async def enqueue(project: Any, requests: list[Request]) -> None:
        await project.scheduler.enqueue(requests)

    response = HtmlResponse(
        PAGE, body=b"<html></html>", request=Request(PAGE, meta={"depth": depth})
    )
    await Scraper(enqueue, lambda project: None).handle_response(project, response)
    return project


async def _links(depth: int, settings: dict[str, Any]) -> list[tuple[Any, ...]]:
    project = await _handled(depth, settings)
    leases = await project.scheduler.frontier.lease(10, time.time() + 1, 60.0)
    return sorted(
        (
            lease.request.url,
            lease.request.priority,
            lease.request.meta["depth"],
            lease.request.headers.text("Referer"),
        )
        for lease in leases
    )


async def test_links_merge_priority_keep_dont_filter_and_drop_offsite() -> None:
    assert await _links(0, {}) == [
        ("http://h.test/a/y.html", 0, 1, PAGE),
        ("http://h.test/a/y.html#top", 0, 1, PAGE),
        ("http://h.test/b/x.html", 5, 1, PAGE),
    ]


async def test_links_beyond_the_depth_limit_are_dropped() -> None:
    assert await _links(1, {"DEPTH_LIMIT": 1}) == []
    assert len(await _links(0, {"DEPTH_LIMIT": 1})) == 3


async def test_followed_links_wait_packed_in_the_memory_frontier() -> None:
    """Links as the default spider middlewares leave them (depth, Referer) are what the
    memory frontier packs: a third of a Request's memory while they wait (white box)."""
    queue = (await _handled(0, {})).scheduler.frontier.queue
    assert queue._ready.packed == 2  # x.html (merged) and y.html; the dont_filter twin,
    assert len(queue) == 3  # queued under a taskid of its own, is kept as it is
