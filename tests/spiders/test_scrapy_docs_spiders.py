"""Spiders written as Scrapy's documentation teaches, run with only their import lines
changed (``import skitter as scrapy``, ``from skitter.spiders import ...``): the items
are exactly those Scrapy gives."""

from __future__ import annotations

import gzip
import re
import textwrap
import types
from typing import Any

import pytest

from ._site import Site, crawl_items

QUOTES = [
    ("The world as we made it is a process of our thinking.", "Albert Einstein", "change,world"),
    ("It is our choices that show what we truly are.", "J.K. Rowling", "abilities,choices"),
    ("There are only two ways to live your life.", "Albert Einstein", "inspirational,life"),
]  # fmt: skip


def quote_page(n: int) -> str:
    text, author, tags = QUOTES[n]
    slug = author.lower().replace(" ", "-").replace(".", "")
    tag_links = "".join(f'<a class="tag" href="/tag/{t}/">{t}</a>' for t in tags.split(","))
    nxt = f'<li class="next"><a href="/page/{n + 2}/">Next</a></li>' if n + 1 < len(QUOTES) else ""
    return (
        f'<div class="quote"><span class="text">\u201c{text}\u201d</span>'
        f'<small class="author">{author}</small> <a href="/author/{slug}/">(about)</a>'
        f'<div class="tags">{tag_links}</div></div><ul class="pager">{nxt}</ul>'
    )


def practice_site() -> Site:
    pages: dict[str, Any] = {"/": quote_page(0)}
    for n in range(len(QUOTES)):
        pages[f"/page/{n + 1}/"] = quote_page(n)
    for _text, author, _tags in QUOTES:
        slug = author.lower().replace(" ", "-").replace(".", "")
        pages[f"/author/{slug}/"] = (
            f'<h3 class="author-title">{author}\n</h3>'
            f'<span class="author-born-date">born {slug}</span>'
        )
    return Site(pages)


def port(source: str, **names: Any) -> types.ModuleType:
    """The Scrapy source with its import lines rewritten, run as a module."""
    code = textwrap.dedent(source)
    code = re.sub(r"(?m)^import scrapy$", "import skitter as scrapy", code)
    code = re.sub(r"(?m)^from scrapy(\.| )", r"from skitter\1", code)
    assert not re.search(r"(?m)^\s*(from|import) scrapy", code)
    module = types.ModuleType("ported")
    module.__dict__.update(names)
    exec(compile(code, "ported.py", "exec"), module.__dict__)
    return module


CRAWL = """
import scrapy
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule
from scrapy.loader import ItemLoader
from itemloaders.processors import MapCompose, TakeFirst, Join


class QuoteItem(scrapy.Item):
    text = scrapy.Field(input_processor=MapCompose(lambda t: t.strip("\\u201c\\u201d")))
    author = scrapy.Field()
    tags = scrapy.Field(output_processor=Join(","))


class QuoteLoader(ItemLoader):
    default_item_class = QuoteItem
    default_output_processor = TakeFirst()


class QuotesCrawlSpider(CrawlSpider):
    name = "quotes_crawl"
    allowed_domains = ["127.0.0.1"]
    start_urls = [BASE + "/"]

    rules = (
        Rule(LinkExtractor(restrict_css="li.next"), callback="parse_page", follow=True),
        Rule(LinkExtractor(allow=r"/author/"), callback="parse_author"),
    )

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        for quote in response.css("div.quote"):
            loader = QuoteLoader(selector=quote)
            loader.add_css("text", "span.text::text")
            loader.add_css("author", "small.author::text")
            loader.add_css("tags", "div.tags a.tag::text")
            yield loader.load_item()

    def parse_author(self, response):
        yield {
            "name": response.css("h3.author-title::text").get().strip(),
            "born": response.css(".author-born-date::text").get(),
        }
"""


async def test_crawl_spider_with_item_loader() -> None:
    site = practice_site()
    base = site.base
    spider = port(CRAWL, BASE=base).QuotesCrawlSpider
    items, stats = await crawl_items(spider, site.settings)
    quotes = sorted((dict(i) for i in items if "text" in i), key=lambda q: q["text"])
    expected = sorted(
        ({"text": t, "author": a, "tags": g} for t, a, g in QUOTES), key=lambda q: q["text"]
    )
    assert quotes == expected
    authors = sorted(i["name"] for i in items if "name" in i)
    assert authors == ["Albert Einstein", "J.K. Rowling"]
    assert stats["finish_reason"] == "finished"


SITEMAP = """
from scrapy.spiders import SitemapSpider


class MySpider(SitemapSpider):
    name = "sitemap_docs"
    sitemap_urls = [BASE + "/robots.txt"]
    sitemap_rules = [
        ("/shop/", "parse_shop"),
    ]
    sitemap_follow = ["/sitemap_shops"]

    def parse_shop(self, response):
        yield {"shop": response.css("h1::text").get()}
"""


async def test_sitemap_spider_from_the_docs() -> None:
    site = Site({})
    base = site.base
    urlset = "".join(f"<url><loc>{base}/shop/{n}</loc></url>" for n in range(3))
    site.pages.update(
        {
            "/robots.txt": ("text/plain", f"Sitemap: {base}/sitemap_index.xml".encode()),
            "/sitemap_index.xml": (
                "text/xml",
                f"<sitemapindex><sitemap><loc>{base}/sitemap_shops.xml.gz</loc></sitemap>"
                f"<sitemap><loc>{base}/sitemap_blog.xml</loc></sitemap></sitemapindex>".encode(),
            ),
            "/sitemap_shops.xml.gz": (
                "application/x-gzip",
                gzip.compress(
                    f"<urlset>{urlset}<url><loc>{base}/about</loc></url></urlset>".encode()
                ),
            ),
            **{f"/shop/{n}": f"<h1>shop {n}</h1>" for n in range(3)},
        }
    )
    items, _ = await crawl_items(port(SITEMAP, BASE=base).MySpider, site.settings)
    assert sorted(i["shop"] for i in items) == ["shop 0", "shop 1", "shop 2"]
    assert site.hits["/sitemap_blog.xml"] == 0 and site.hits["/about"] == 0


FEEDS = """
import scrapy
from scrapy.spiders import XMLFeedSpider, CSVFeedSpider


class TestItem(scrapy.Item):
    id = scrapy.Field()
    name = scrapy.Field()
    description = scrapy.Field()


class MyXMLSpider(XMLFeedSpider):
    name = "xml_docs"
    allowed_domains = ["127.0.0.1"]
    start_urls = [BASE + "/feed.xml"]
    iterator = "iternodes"  # This is actually unnecessary, since it's the default value
    itertag = "item"

    def parse_node(self, response, node):
        self.logger.info("Hi, this is a <%s> node!: %s", self.itertag, "".join(node.getall()))
        item = TestItem()
        item["id"] = node.xpath("@id").get()
        item["name"] = node.xpath("name/text()").get()
        item["description"] = node.xpath("description/text()").get()
        return item


class MyCSVSpider(CSVFeedSpider):
    name = "csv_docs"
    allowed_domains = ["127.0.0.1"]
    start_urls = [BASE + "/feed.csv"]
    delimiter = ";"
    quotechar = "'"
    headers = ["id", "name", "description"]

    def parse_row(self, response, row):
        self.logger.info("Hi, this is a row!: %r", row)
        item = TestItem()
        item["id"] = row["id"]
        item["name"] = row["name"]
        item["description"] = row["description"]
        return item
"""

ROWS = [("1", "pen", "writes; well"), ("2", "ink", "blue")]


@pytest.mark.parametrize("kind", ["MyXMLSpider", "MyCSVSpider"])
async def test_feed_spiders_from_the_docs(kind: str) -> None:
    xml = "".join(
        f'<item id="{i}"><name>{n}</name><description>{d}</description></item>' for i, n, d in ROWS
    )
    csv = "".join(f"{i};{n};'{d}'\n" for i, n, d in ROWS)
    site = Site(
        {
            "/feed.xml": ("application/xml", f"<?xml version='1.0'?><items>{xml}</items>".encode()),
            "/feed.csv": ("text/csv", csv.encode()),
        }
    )
    base = site.base
    items, _ = await crawl_items(getattr(port(FEEDS, BASE=base), kind), site.settings)
    assert [dict(i) for i in items] == [{"id": i, "name": n, "description": d} for i, n, d in ROWS]
    assert all(type(i).__name__ == "TestItem" for i in items)
