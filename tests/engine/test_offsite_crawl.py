"""Whole crawls that stay inside allowed_domains whatever produced the request: a
redirect, a scheme-relative Location, a downloader middleware, a start URL, an
``@every`` callback. The site answers as 127.0.0.1 and as localhost and counts the
hits per host, so "not crawled" means "the server never saw it"."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from skitter import Crawler, Request, Response, Spider, every, run_crawlers
from skitter.exceptions import CrawlFailed
from skitter.testing import wait_until

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4, "LOG_LEVEL": "WARNING"}


def links(*hrefs: str) -> str:
    return "".join(f'<a href="{h}">{h}</a>' for h in hrefs)


def collecting_spider(start: str, allowed: list[str], **attrs: Any) -> type[Spider]:
    class Collect(Spider):
        name = "collect"
        start_urls = [start]
        allowed_domains = allowed
        items: list[str] = []

        def parse(self, response: Response) -> Any:
            type(self).items.append(response.url)
            yield {"url": response.url}
            yield from response.follow_all(css="a::attr(href)")

    Collect.items = []
    for key, value in attrs.items():
        setattr(Collect, key, value)
    return Collect


def offsite_failures(crawler: Crawler) -> list[str]:
    assert crawler.control.monitor is not None
    return [o.reason for o in crawler.control.monitor.failures if "offsite" in o.reason]


@pytest.mark.parametrize("location", ["http://localhost:{port}/away", "//localhost:{port}/away"])
async def test_a_redirect_to_another_host_is_not_followed(location: str, host_site: Any) -> None:
    """The issue's report: the 302 was fetched and its items scraped."""
    site, port = await host_site({"/": links("/moved"), "/away": "offsite page"})
    site.pages["/moved"] = (302, location.format(port=port))
    spider = collecting_spider(f"http://127.0.0.1:{port}/", ["127.0.0.1"])
    crawler = Crawler(spider, FAST)
    stats = await crawler.run()
    assert site.on("localhost") == 0
    assert spider.items == [f"http://127.0.0.1:{port}/"]
    assert stats["offsite/filtered"] == 1
    assert offsite_failures(crawler) == [
        f"ignored: offsite: localhost:{port} is outside allowed_domains"
    ]


async def test_a_start_url_redirecting_offsite_keeps_no_exemption(host_site: Any) -> None:
    """Start URLs are dont_filter=True; the redirect kept it and the old filter honoured
    it. And a link marked dont_filter is refused just the same."""
    site, port = await host_site({})
    site.pages["/"] = links(f"http://localhost:{port}/link")
    site.pages["/start"] = (302, f"http://localhost:{port}/")
    spider = collecting_spider(f"http://127.0.0.1:{port}/start", ["127.0.0.1"])

    def parse(self: Any, response: Response) -> Any:
        yield Request(f"http://localhost:{port}/forced", dont_filter=True)

    spider.parse = parse  # type: ignore[method-assign]
    with pytest.raises(CrawlFailed, match="start request got no response"):
        await Crawler(spider, FAST).run()  # its one start request went offsite
    assert site.on("localhost") == 0


async def test_allow_offsite_is_kept_on_its_host_and_dropped_when_leaving_it(
    host_site: Any,
) -> None:
    site, port = await host_site({"/b": "b", "/elsewhere": "x"})
    site.pages["/a"] = (302, "/b")  # same host: still exempt
    site.pages["/hop"] = (302, f"http://localhost:{port}/elsewhere")  # another host: not

    class Exempt(Spider):
        name = "exempt"
        allowed_domains = ["127.0.0.1"]
        seen: list[str] = []

        def start_requests(self) -> Any:
            yield Request(f"http://localhost:{port}/a", meta={"allow_offsite": True})
            yield Request(f"http://127.0.0.1:{port}/hop", meta={"allow_offsite": True})

        def parse(self, response: Response) -> Any:
            type(self).seen.append(response.url)

    await Crawler(Exempt, FAST).run()
    assert Exempt.seen == [f"http://localhost:{port}/b"]
    assert site.hits[("localhost", "/elsewhere")] == 0
    assert site.hits[("localhost", "/b")] == 1


class Diverter:
    """A downloader middleware that answers one path with a request to another host."""

    def __init__(self, target: str) -> None:
        self.target = target

    def process_request(self, request: Request, spider: Any) -> Request | None:
        if request.url.endswith("/divert"):
            return Request(self.target)
        return None


async def test_a_request_returned_by_a_downloader_middleware_is_checked(
    host_site: Any,
) -> None:
    site, port = await host_site({"/": links("/divert"), "/there": "offsite"})
    diverter = Diverter(f"http://localhost:{port}/there")
    spider = collecting_spider(f"http://127.0.0.1:{port}/", ["127.0.0.1"])
    settings = {**FAST, "DOWNLOADER_MIDDLEWARES": {diverter: 300}}
    crawler = Crawler(spider, settings)
    await crawler.run()
    assert site.on("localhost") == 0
    assert len(offsite_failures(crawler)) == 1


async def test_an_offsite_start_url_is_refused_with_one_warning_per_host(
    host_site: Any, caplog: pytest.LogCaptureFixture
) -> None:
    site, port = await host_site({"/": "home", "/a": "a", "/b": "b"})

    class Misconfigured(Spider):
        name = "misconfigured"
        start_urls = [f"http://localhost:{port}/a", f"http://localhost:{port}/b"]
        allowed_domains = ["127.0.0.1"]

        def parse(self, response: Response) -> None:
            return None

    crawler = Crawler(Misconfigured, FAST)
    with caplog.at_level(logging.WARNING), pytest.raises(CrawlFailed) as failed:
        await crawler.run()  # not one start request got anywhere: the crawl failed
    stats = failed.value.stats
    assert site.on("localhost") == 0
    warnings = [r.getMessage() for r in caplog.records if "Start URL" in r.getMessage()]
    assert len(warnings) == 1
    assert f"http://localhost:{port}/a is outside allowed_domains ['127.0.0.1']" in warnings[0]
    assert len(offsite_failures(crawler)) == 2  # both BAD, reason offsite
    assert stats["offsite/filtered"] == 2


async def test_an_every_request_outside_the_scope_is_never_fetched(host_site: Any) -> None:
    site, port = await host_site({"/tick": "tick"})
    ran = asyncio.Event()

    class Periodic(Spider):
        name = "periodic"
        allowed_domains = ["127.0.0.1"]

        @every(seconds=60)
        def refresh(self) -> Any:
            yield Request(f"http://localhost:{port}/tick", callback=self.done)
            yield Request(f"http://127.0.0.1:{port}/tick", callback=self.done)

        def done(self, response: Response) -> None:
            ran.set()

    crawler = Crawler(Periodic, FAST)
    task = asyncio.ensure_future(run_crawlers([crawler], mode="serve"))
    await asyncio.wait_for(ran.wait(), 20)
    await wait_until(lambda: crawler.stats.get("offsite/filtered"))  # by now or very soon
    crawler.stop()
    await asyncio.wait_for(task, 20)
    assert site.hits[("127.0.0.1", "/tick")] == 1
    assert site.on("localhost") == 0
    assert crawler.stats.get("offsite/filtered") == 1


async def test_an_ipv6_entry_no_longer_allows_every_host(host_site: Any) -> None:
    """allowed_domains = ["::1"] used to be reduced to "" and switch the filter off."""
    site, port = await host_site({})
    site.pages["/"] = links(f"http://localhost:{port}/x")
    spider = collecting_spider(f"http://127.0.0.1:{port}/", ["::1"])
    with pytest.raises(CrawlFailed) as failed:
        await Crawler(spider, FAST).run()  # its one start request is offsite
    stats = failed.value.stats
    assert site.on("127.0.0.1") == site.on("localhost") == 0
    assert spider.items == []
    assert stats["offsite/filtered"] == 1
