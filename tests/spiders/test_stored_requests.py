"""The requests the spider kinds make can be stored by a durable frontier (SQLite and
Redis share the codec) and, decoded on a new spider instance, reach the same code."""

from __future__ import annotations

from typing import Any

from skitter import Request, Response
from skitter.http._codec import decode_request, encode_request
from skitter.linkextractors import LinkExtractor
from skitter.spider import aiter_output
from skitter.spiders import CrawlSpider, CSVFeedSpider, Rule, SitemapSpider, XMLFeedSpider


class Shop(CrawlSpider):
    name = "shop"
    rules = (
        Rule(LinkExtractor(allow="/cat/")),
        Rule(LinkExtractor(allow="/item/"), callback="parse_item", cb_kwargs={"kind": "item"}),
    )

    def parse_item(self, response: Response, kind: str) -> Any:
        return {"url": response.url, "kind": kind}


def html(url: str, body: str) -> Response:
    return Response(url, headers={"Content-Type": "text/html"}, body=body.encode())


async def collect(output: Any) -> list[Any]:
    return [obj async for obj in aiter_output(output)]


async def test_crawl_spider_requests_come_back_to_their_rule() -> None:
    first = Shop()
    page = html("http://shop/", '<a href="/cat/1">c</a><a href="/item/1">i</a>')
    requests = await collect(first.parse(page))
    assert [r.meta["rule"] for r in requests] == [0, 1]
    stored = [encode_request(r, first) for r in requests]

    second = Shop()  # another run, or another worker
    restored = [decode_request(data, second) for data in stored]
    assert [r.callback for r in restored] == [second._callback, second._callback]
    assert restored[1].meta == {"rule": 1, "link_text": "i"}
    item_page = html("http://shop/item/1", "<p>x</p>")
    item_page.request = restored[1]
    assert await collect(restored[1].callback(item_page)) == [
        {"url": "http://shop/item/1", "kind": "item"}
    ]


async def test_start_requests_of_the_generic_spiders_are_storable() -> None:
    class Feed(XMLFeedSpider):
        name = "feed"
        start_urls = ["http://x/feed.xml"]

    class Table(CSVFeedSpider):
        name = "table"
        start_urls = ["http://x/t.csv"]

    class Crawl(Shop):
        start_urls = ["http://x/"]

    class Maps(SitemapSpider):
        name = "maps"
        sitemap_urls = ["http://x/robots.txt"]

    for cls in (Feed, Table, Crawl, Maps):
        spider = cls()
        requests = await collect(spider.start())
        assert requests, cls
        for request in requests:
            back = decode_request(encode_request(request, spider), cls())
            assert back.callback is not None and back.callback.__name__ in (
                "_parse",
                "_parse_sitemap",
            )


def test_sitemap_rule_callbacks_given_as_functions_are_storable() -> None:
    class Maps(SitemapSpider):
        name = "maps"

        def parse_page(self, response: Response) -> Any:
            return None

        sitemap_rules = [("/p/", parse_page)]

    spider = Maps()
    body = b"<urlset><url><loc>http://x/p/1</loc></url></urlset>"
    response = Response("http://x/s.xml", headers={"Content-Type": "text/xml"}, body=body)
    (request,) = list(spider._parse_sitemap(response))
    assert isinstance(request, Request)
    back = decode_request(encode_request(request, spider), spider)
    assert back.callback == spider.parse_page
