"""The built-in spider middlewares, fed real Request and Response objects."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from skitter.exceptions import HttpError
from skitter.http import Request, Response
from skitter.http._referrer import DefaultReferrerPolicy
from skitter.spider import Spider
from skitter.spider._builtin_middlewares import (
    DepthMiddleware,
    HttpErrorMiddleware,
    OffsiteMiddleware,
    RefererMiddleware,
    UrlLengthMiddleware,
)


async def run(mw: Any, response: Response, *objs: Any, spider: Any = None) -> list[Any]:
    async def result() -> AsyncIterator[Any]:
        for obj in objs:
            yield obj

    return [obj async for obj in mw.process_spider_output(response, result(), spider)]


def page(url: str = "http://example.com/", status: int = 200, **meta: Any) -> Response:
    return Response(url, status=status, request=Request(url, meta=meta))


# -- HttpErrorMiddleware ------------------------------------------------------------------
class Handles404(Spider):
    name = "h"
    handle_httpstatus_list = (404,)


@pytest.mark.parametrize(
    ("status", "meta", "settings", "spider", "passes"),
    [
        (200, {}, {}, None, True),
        (204, {}, {}, None, True),
        (404, {}, {}, None, False),
        (301, {}, {}, None, False),
        (404, {}, {}, Handles404(), True),
        (500, {}, {}, Handles404(), False),
        (500, {}, {"HTTPERROR_ALLOWED_CODES": [500]}, Handles404(), True),
        (500, {}, {"HTTPERROR_ALLOW_ALL": True}, None, True),
        (500, {"handle_httpstatus_all": True}, {}, None, True),
        (500, {"handle_httpstatus_list": [500]}, {}, None, True),
        # the meta list alone decides, as in Scrapy
        (404, {"handle_httpstatus_list": [500]}, {}, Handles404(), False),
        (404, {"handle_httpstatus_list": []}, {"HTTPERROR_ALLOW_ALL": True}, None, False),
    ],
)
def test_http_error_filter(make_crawler, status, meta, settings, spider, passes) -> None:
    crawler = make_crawler(**settings)
    mw = HttpErrorMiddleware.from_crawler(crawler)
    response = page(status=status, **meta)
    if passes:
        mw.process_spider_input(response, spider)
        assert "httperror/response_ignored_count" not in crawler.stats
        return
    with pytest.raises(HttpError, match="Ignoring non-200 response") as info:
        mw.process_spider_input(response, spider)
    assert info.value.response is response
    assert info.value.request is response.request
    assert crawler.stats["httperror/response_ignored_count"] == 1
    assert crawler.stats[f"httperror/response_ignored_status_count/{status}"] == 1


# -- OffsiteMiddleware --------------------------------------------------------------------
class Shop(Spider):
    name = "shop"
    allowed_domains = ("example.com", "Other.org", "api.net:8443")


async def test_offsite_drops_other_hosts_and_counts_domains_once(make_crawler) -> None:
    crawler = make_crawler()
    mw = OffsiteMiddleware.from_crawler(crawler)
    keep = [
        Request("http://example.com/a"),
        Request("https://shop.example.com:8443/b"),
        Request("http://other.org/"),
        Request("https://api.net:8443/v1"),
        Request("http://evil.com/y", meta={"allow_offsite": True}),
        {"item": 1},
    ]
    drop = [
        Request("http://notexample.com/"),
        Request("http://evil.com/1"),
        Request("http://evil.com/2"),
        Request("http://example.com.evil.com/"),
        Request("https://api.net/v1"),  # api.net on 443: not the port allowed
        Request("http://example.com@evil.com/"),  # userinfo, host evil.com
    ]
    out = await run(mw, page(), *keep[:4], *drop, *keep[4:], spider=Shop())
    assert out == keep
    assert crawler.stats["offsite/filtered"] == 6
    assert crawler.stats["offsite/domains"] == 4


async def test_dont_filter_does_not_let_an_offsite_link_through(make_crawler) -> None:
    crawler = make_crawler()
    mw = OffsiteMiddleware.from_crawler(crawler)
    assert await run(mw, page(), Request("http://evil.com/", dont_filter=True), spider=Shop()) == []
    assert crawler.stats["offsite/filtered"] == 1


async def test_offsite_allows_everything_without_allowed_domains(make_crawler) -> None:
    mw = OffsiteMiddleware.from_crawler(make_crawler())
    anywhere = [Request("http://a.com/"), Request("http://b.net/")]
    assert await run(mw, page(), *anywhere, spider=Spider("open")) == anywhere


@pytest.mark.parametrize("allowed", [["::1"], ["2001:db8::1"], [""], ["http://"], ["127.1"]])
async def test_ipv6_and_unusable_entries_do_not_switch_the_filter_off(
    allowed: list[str], make_crawler
) -> None:
    """The old filter reduced "::1" (and "" or "http://") to nothing: no filter at all."""

    class Odd(Spider):
        name = "odd"
        allowed_domains = allowed

    mw = OffsiteMiddleware.from_crawler(make_crawler())
    v6 = Request("http://[::1]:8080/")
    out = await run(mw, page(), v6, Request("http://evil.com/"), spider=Odd())
    assert out == ([v6] if allowed == ["::1"] else [])


async def test_offsite_learns_each_spider(make_crawler) -> None:
    mw = OffsiteMiddleware.from_crawler(make_crawler())
    request = Request("http://evil.com/")
    assert await run(mw, page(), request, spider=Shop()) == []
    assert await run(mw, page(), request, spider=Spider("open")) == [request]


async def test_offsite_start_urls_are_kept_with_one_warning_per_host(make_crawler, caplog) -> None:
    mw = OffsiteMiddleware.from_crawler(make_crawler())
    start = [
        Request("http://example.com/"),
        Request("http://localhost:8080/a"),
        Request("http://localhost:8080/b"),
        Request("http://elsewhere.org/", meta={"allow_offsite": True}),
    ]

    async def source() -> AsyncIterator[Request]:
        for request in start:
            yield request

    with caplog.at_level(logging.WARNING, logger="skitter.spider.middlewares"):
        out = [r async for r in mw.process_start_requests(source(), Shop())]
    assert out == start  # refused when downloaded, not here
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert "http://localhost:8080/a is outside allowed_domains" in warnings[0]
    assert "'localhost:8080'" in warnings[0]


# -- RefererMiddleware --------------------------------------------------------------------
async def test_referer_is_the_page_without_fragment_or_credentials(make_crawler) -> None:
    mw = RefererMiddleware.from_crawler(make_crawler())
    has_own = Request("http://example.com/c", headers={"Referer": "http://mine/"})
    links = [Request("https://example.com/a"), has_own, {"item": 1}]
    out = await run(mw, page("https://u:p@example.com/p?q=1#frag"), *links)
    assert out[0]._headers is None  # kept as the page's string until read (issue 18)
    assert out[0].headers["Referer"] == b"https://example.com/p?q=1"
    assert out[1].headers["Referer"] == b"http://mine/"


async def test_no_referer_on_downgrade(make_crawler) -> None:
    mw = RefererMiddleware.from_crawler(make_crawler())
    [secure, plain] = await run(
        mw, page("https://example.com/"), Request("https://b.com/"), Request("http://b.com/")
    )
    assert secure.headers["Referer"] == b"https://example.com/"
    assert "Referer" not in plain.headers


def test_no_referer_from_local_pages() -> None:
    policy = DefaultReferrerPolicy()
    assert policy.referrer("file:///etc/passwd", "http://a.com/") is None
    assert policy.referrer("s3://bucket/key", "http://a.com/") is None
    assert policy.referrer("http://a.com:80/x", "http://b.com/") == "http://a.com/x"


# -- UrlLengthMiddleware ------------------------------------------------------------------
async def test_url_length_limit(make_crawler) -> None:
    crawler = make_crawler(URLLENGTH_LIMIT=30)
    mw = UrlLengthMiddleware.from_crawler(crawler)
    short = Request("http://example.com/" + "a" * 11)  # exactly 30
    long = Request("http://example.com/" + "a" * 12)
    assert await run(mw, page(), short, long, {"i": 1}) == [short, {"i": 1}]
    assert crawler.stats["urllength/request_ignored_count"] == 1


# -- DepthMiddleware ----------------------------------------------------------------------
async def test_depth_is_counted_limited_and_shifts_priority(make_crawler) -> None:
    crawler = make_crawler(DEPTH_LIMIT=2, DEPTH_PRIORITY=1)
    mw = DepthMiddleware.from_crawler(crawler)
    start = page()
    [child] = await run(mw, start, Request("http://example.com/1", priority=10))
    assert start.meta["depth"] == 0
    assert (child.meta["depth"], child.priority) == (1, 9)
    [grandchild] = await run(mw, page(**child.meta), Request("http://example.com/2"))
    assert (grandchild.meta["depth"], grandchild.priority) == (2, -2)
    assert await run(mw, page(**grandchild.meta), Request("http://x/3"), {"i": 1}) == [{"i": 1}]
    assert crawler.stats["request_depth_max"] == 2
    assert crawler.stats["depth/request_ignored_count"] == 1


async def test_depth_without_limit(make_crawler) -> None:
    crawler = make_crawler()
    mw = DepthMiddleware.from_crawler(crawler)
    [deep] = await run(mw, page(depth=41), Request("http://example.com/"))
    assert (deep.meta["depth"], deep.priority) == (42, 0)
    assert crawler.stats["request_depth_max"] == 42


async def test_depth_reset_starts_again_past_the_limit_and_verbose_counts(make_crawler) -> None:
    crawler = make_crawler(DEPTH_LIMIT=1, DEPTH_STATS_VERBOSE=True)
    mw = DepthMiddleware.from_crawler(crawler)
    start = page()
    kept = Request("http://example.com/1")
    [got] = await run(mw, start, kept)
    assert got.meta["depth"] == 1
    other_site = Request("http://other.example/", meta={"depth_reset": True})
    too_deep = Request("http://example.com/2")
    assert await run(mw, page(depth=1), other_site, too_deep) == [other_site]
    assert other_site.meta == {"depth": 0}  # the key is consumed, not copied on
    counts = {k: v for k, v in dict(crawler.stats).items() if "depth" in k}
    assert counts == {
        "request_depth_count/0": 2,  # the start page, and the reset request
        "request_depth_count/1": 1,
        "request_depth_max": 1,
        "depth/request_ignored_count": 1,
    }
