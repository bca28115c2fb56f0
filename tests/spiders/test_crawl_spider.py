"""CrawlSpider and Rule, end to end against a local site: rules in order, a link to
the first rule that extracts it, follow, processors, errbacks, and a resumed job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skitter import Request, Response
from skitter.http import Link
from skitter.linkextractors import LinkExtractor
from skitter.spiders import CrawlSpider, Rule
from skitter.testing._redis import RedisServer, require_redis_server

from ._site import Site, crawl_items


def links(*hrefs: str) -> str:
    return "".join(f'<a href="{h}">{h.strip("/")}</a>' for h in hrefs)


def shop() -> Site:
    return Site(
        {
            "/": links("/cat/1", "/cat/2", "/about.pdf", "/item/0"),
            "/cat/1": links("/item/1", "/item/2", "/cat/1?page=2"),
            "/cat/1?page=2": links("/item/3"),
            "/cat/2": links("/item/4", "/cat/1"),
            **{f"/item/{n}": f"<h1>item {n}</h1>{links('/cat/2')}" for n in range(5)},
        }
    )


class Shop(CrawlSpider):
    name = "shop"
    rules = (
        Rule(LinkExtractor(allow=r"/cat/")),
        Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),
    )

    def parse_item(self, response: Response) -> Any:
        yield {"title": response.css("h1::text").get(), "rule": response.meta["rule"]}


async def test_rules_follow_categories_and_parse_items() -> None:
    site = shop()
    base = site.base

    class Spider(Shop):
        start_urls = [base + "/"]

    items, stats = await crawl_items(Spider, site.settings)
    assert sorted(i["title"] for i in items) == [f"item {n}" for n in range(5)]
    assert {i["rule"] for i in items} == {1}
    assert site.hits["/about.pdf"] == 0  # IGNORED_EXTENSIONS
    assert stats["finish_reason"] == "finished"
    # item pages are not followed: a callback without follow=True stops there
    assert site.hits["/cat/2"] == 1


async def test_a_link_goes_to_the_first_rule_that_extracts_it() -> None:
    site = Site({"/": links("/a/x", "/b/y"), "/a/x": "x", "/b/y": "y"})
    base = site.base

    class Spider(CrawlSpider):
        name = "first"
        start_urls = [base + "/"]
        rules = (
            Rule(LinkExtractor(allow=r"/a/"), callback="one"),
            Rule(LinkExtractor(), callback="two"),  # also extracts /a/x: not taken again
        )

        def one(self, response: Response) -> Any:
            return {"url": response.url, "by": "one"}

        def two(self, response: Response) -> Any:
            return {"url": response.url, "by": "two"}

    items, _ = await crawl_items(Spider, site.settings)
    assert sorted((i["url"][len(base) :], i["by"]) for i in items) == [
        ("/a/x", "one"),
        ("/b/y", "two"),
    ]


async def test_parse_start_url_cb_kwargs_and_parse_as_a_rule_callback() -> None:
    site = Site({"/": links("/p/1"), "/p/1": "<h1>one</h1>"})
    base = site.base

    class Spider(CrawlSpider):
        name = "start"
        start_urls = [base + "/"]
        rules = (Rule(LinkExtractor(), callback="parse", cb_kwargs={"kind": "page"}),)

        def parse_start_url(self, response: Response, **kwargs: Any) -> Any:
            return [{"start": response.url}]

        def parse(self, response: Response, **kwargs: Any) -> Any:
            yield {"page": response.css("h1::text").get(), **kwargs}

    items, _ = await crawl_items(Spider, site.settings)
    assert items[0] == {"start": base + "/"} or {"start": base + "/"} in items
    assert {"page": "one", "kind": "page"} in items
    assert len(items) == 2


async def test_follow_true_with_a_callback_and_process_results() -> None:
    site = Site({"/": links("/1"), "/1": links("/2"), "/2": links("/3"), "/3": "end"})
    base = site.base

    class Spider(CrawlSpider):
        name = "chain"
        start_urls = [base + "/"]
        rules = (Rule(LinkExtractor(), callback="page", follow=True),)

        async def page(self, response: Response) -> Any:
            yield {"url": response.url[len(base) :]}

        def process_results(self, response: Response, results: Any) -> Any:
            return [{**item, "processed": True} for item in results]

    items, _ = await crawl_items(Spider, site.settings)
    assert sorted(i["url"] for i in items) == ["/1", "/2", "/3"]
    assert all(i["processed"] for i in items)


async def test_process_links_and_process_request_by_name() -> None:
    site = Site(
        {
            "/": links("/keep/1", "/drop/2", "/keep/3"),
            **{p: "x" for p in ("/keep/1", "/drop/2", "/keep/3")},
        }
    )
    base = site.base

    class Spider(CrawlSpider):
        name = "processors"
        start_urls = [base + "/"]
        rules = (
            Rule(
                LinkExtractor(),
                callback="page",
                process_links="only_keep",
                process_request="tag_or_drop",
            ),
        )

        def only_keep(self, found: list[Link]) -> list[Link]:
            return [link for link in found if "/keep/" in link.url]

        def tag_or_drop(self, request: Request, response: Response) -> Request | None:
            if request.url.endswith("/3"):
                return None
            request.meta["from"] = response.url
            return request

        def page(self, response: Response) -> Any:
            return {
                "url": response.url,
                "from": response.meta["from"],
                "text": response.meta["link_text"],
            }

    items, _ = await crawl_items(Spider, site.settings)
    assert items == [{"url": base + "/keep/1", "from": base + "/", "text": "keep/1"}]
    assert site.hits["/drop/2"] == 0 and site.hits["/keep/3"] == 0


async def test_a_rule_errback_gets_the_failure() -> None:
    site = Site({"/": links("/missing")})
    base = site.base

    class Spider(CrawlSpider):
        name = "errback"
        start_urls = [base + "/"]
        rules = (Rule(LinkExtractor(), callback="page", errback="failed"),)

        def page(self, response: Response) -> Any:
            return {"ok": response.url}

        def failed(self, failure: Any) -> Any:
            request = getattr(failure, "request", None)
            yield {"failed": request.url if request is not None else None}

    items, _ = await crawl_items(Spider, {**site.settings, "RETRY_ENABLED": False})
    assert items == [{"failed": base + "/missing"}]


async def test_non_html_pages_are_not_searched_for_links() -> None:
    feed = b'<a href="/hidden">x</a>'
    site = Site({"/": links("/data"), "/data": ("application/json", feed), "/hidden": "h"})
    base = site.base

    class Spider(CrawlSpider):
        name = "nonhtml"
        start_urls = [base + "/"]
        rules = (Rule(LinkExtractor(), follow=True),)

    await crawl_items(Spider, site.settings)
    assert site.hits["/data"] == 1
    assert site.hits["/hidden"] == 0


def test_a_missing_method_name_is_refused_at_once() -> None:
    class Spider(CrawlSpider):
        name = "typo"
        rules = (Rule(LinkExtractor(), callback="parse_itme"),)

    with pytest.raises(AttributeError, match="parse_itme"):
        Spider()


def test_follow_defaults_to_true_only_without_a_callback() -> None:
    assert Rule().follow is True
    assert Rule(callback="x").follow is False
    assert Rule(callback="x", follow=True).follow is True


async def test_a_job_dir_crawl_resumes_into_the_same_rules(tmp_path: Path) -> None:
    site = shop()
    base = site.base

    class Spider(Shop):
        start_urls = [base + "/"]

    job = tmp_path / "job"
    first, stats = await crawl_items(
        Spider, {**site.settings, "CLOSESPIDER_PAGECOUNT": 3, "CONCURRENT_REQUESTS": 1}, job_dir=job
    )
    assert stats["finish_reason"] == "closespider_pagecount"
    second, stats = await crawl_items(Spider, site.settings, job_dir=job)
    assert stats["finish_reason"] == "finished"
    assert second, "the resumed run had the queued rule requests to do"
    titles = sorted(i["title"] for i in first + second)
    assert titles == [f"item {n}" for n in range(5)]
    assert {i["rule"] for i in first + second} == {1}
    assert all(count == 1 for count in site.hits.values()), site.hits


async def test_a_redis_queue_carries_rule_requests_between_workers() -> None:
    site = shop()
    base = site.base

    class Spider(Shop):
        start_urls = [base + "/"]

    with RedisServer(binary=require_redis_server()) as server:
        settings = {**site.settings, "WORKER_IDLE_TIMEOUT": 0.2}
        items, stats = await crawl_items(Spider, settings, redis_url=server.url, job="rules")
    assert sorted(i["title"] for i in items) == [f"item {n}" for n in range(5)]
    assert {i["rule"] for i in items} == {1}
    assert stats.get("spider_exceptions/count", 0) == 0


async def test_follow_links_false_stops_every_rule() -> None:
    site = shop()
    base = site.base

    class Spider(Shop):
        start_urls = [base + "/"]
        _follow_links = False

    items, _ = await crawl_items(Spider, site.settings)
    assert items == []
    assert sum(site.hits.values()) == 1
