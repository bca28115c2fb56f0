"""XMLFeedSpider and CSVFeedSpider end to end, and their streaming iterators."""

from __future__ import annotations

import csv
import logging
import tracemalloc
from typing import Any

import pytest

from skitter import Request, Response
from skitter.spiders import CSVFeedSpider, XMLFeedSpider
from skitter.spiders._iterators import _readable_rows, csv_rows, xml_nodes

from ._site import Site, crawl_items

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<item><title>First</title><dc:creator>Ada</dc:creator><link>/q/1</link></item>
<item><title>Second \xc3\xa9</title><dc:creator>Alan</dc:creator><link>/q/2</link></item>
</channel></rss>"""

NAMESPACED = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns:x="http://www.google.com/schemas/sitemap/0.84"
        xmlns:y="http://www.example.com/schemas/extras/1.0">
<url><x:loc>http://www.example.com/Special-Offers.html</x:loc><y:updated>2009-08-16</y:updated>
<other value="bar" y:custom="fuu"/></url>
<url><loc>http://www.example.com/</loc><y:updated>2009-08-16</y:updated><other value="foo"/></url>
</urlset>"""

CSV = 'id,name,quote\n1,Ada,"Hello, world"\n2,Alan,"multi\nline"\n3,bad\n4,Grace,Caf\xe9\n'


def xml_response(body: bytes, content_type: str = "application/xml") -> Response:
    return Response("http://example.com/feed", headers={"Content-Type": content_type}, body=body)


class Rss(XMLFeedSpider):
    name = "rss"
    itertag = "item"
    namespaces = [("dc", "http://purl.org/dc/elements/1.1/")]

    def parse_node(self, response: Response, selector: Any) -> Any:
        yield {
            "title": selector.xpath("title/text()").get(),
            "by": selector.xpath("dc:creator/text()").get(),
        }
        yield response.follow(selector.xpath("link/text()").get(), callback=self.page)

    def page(self, response: Response) -> Any:
        return {"page": response.css("h1::text").get()}


@pytest.mark.parametrize("iterator", ["iternodes", "xml"])
async def test_xml_feed_nodes_and_followed_links(iterator: str) -> None:
    site = Site(
        {"/feed.xml": ("application/rss+xml", RSS), "/q/1": "<h1>one</h1>", "/q/2": "<h1>two</h1>"}
    )
    base = site.base

    class Spider(Rss):
        start_urls = [base + "/feed.xml"]

    Spider.iterator = iterator
    items, stats = await crawl_items(Spider, site.settings)
    feed_items = [i for i in items if "title" in i]
    assert feed_items == [{"title": "First", "by": "Ada"}, {"title": "Second é", "by": "Alan"}]
    assert sorted(i["page"] for i in items if "page" in i) == ["one", "two"]
    assert stats["finish_reason"] == "finished"


async def test_process_results_adapt_response_and_requests_without_callback() -> None:
    pages = {
        "/feed.xml": ("application/xml", RSS.replace(b"<link>", b"<link>/more")),
        "/more/q/1": ("application/xml", b"<rss><item><title>Third</title></item></rss>"),
    }
    site = Site(pages)
    base = site.base

    class Spider(XMLFeedSpider):
        name = "adapt"
        start_urls = [base + "/feed.xml"]

        def adapt_response(self, response: Response) -> Response:
            return response.replace(body=response.body.replace(b"First", b"Premier"))

        def parse_node(self, response: Response, selector: Any) -> Any:
            yield {"title": selector.xpath("title/text()").get()}
            link = selector.xpath("link/text()").get()
            if link == "/more/q/1":
                yield Request(base + link)  # no callback: back to the feed parser

        def process_results(self, response: Response, results: Any) -> Any:
            return [
                {**r, "from": response.url[len(base) :]} if isinstance(r, dict) else r
                for r in results
            ]

    items, _ = await crawl_items(Spider, site.settings)
    assert sorted(map(str, items)) == sorted(
        map(
            str,
            [
                {"title": "Premier", "from": "/feed.xml"},
                {"title": "Second é", "from": "/feed.xml"},
                {"title": "Third", "from": "/more/q/1"},
            ],
        )
    )


async def test_csv_feed_rows() -> None:
    site = Site({"/q.csv": ("text/csv; charset=latin-1", CSV.encode("latin-1"))})
    base = site.base

    class Spider(CSVFeedSpider):
        name = "csv"
        start_urls = [base + "/q.csv"]

        def parse_row(self, response: Response, row: dict[str, str]) -> Any:
            return {"id": int(row["id"]), "quote": row["quote"]}

    items, _ = await crawl_items(Spider, site.settings)
    assert items == [
        {"id": 1, "quote": "Hello, world"},
        {"id": 2, "quote": "multi\nline"},
        {"id": 4, "quote": "Café"},
    ]


async def test_csv_delimiter_quotechar_and_headers() -> None:
    body = b"1;'a;b'\n2;c\n"
    site = Site({"/x.csv": ("text/csv", body)})
    base = site.base

    class Spider(CSVFeedSpider):
        name = "semicolons"
        start_urls = [base + "/x.csv"]
        delimiter = ";"
        quotechar = "'"
        headers = ["n", "v"]

        def parse_row(self, response: Response, row: dict[str, str]) -> Any:
            return row

    items, _ = await crawl_items(Spider, site.settings)
    assert items == [{"n": "1", "v": "a;b"}, {"n": "2", "v": "c"}]


async def test_a_field_over_the_csv_modules_limit_loses_no_row() -> None:
    """Issue 27: a field over Python's csv limit (131,072 characters) raised inside the
    iterator, and that row and every row after it were lost with the crawl "finished".
    The field limit is the body's, which DOWNLOAD_MAXSIZE bounds; the process's own
    limit is left as it was."""
    long = "x" * 300_000
    body = f'id,text\n1,short\n2,"{long}"\n3,{long}\n4,after\n'.encode()
    site = Site({"/big.csv": ("text/csv", body)})
    base = site.base

    class Spider(CSVFeedSpider):
        name = "long"
        start_urls = [base + "/big.csv"]

        def parse_row(self, response: Response, row: dict[str, str]) -> Any:
            return {"id": row["id"], "length": len(row["text"])}

    before = csv.field_size_limit()
    items, stats = await crawl_items(Spider, site.settings)
    assert items == [
        {"id": "1", "length": 5},
        {"id": "2", "length": 300_000},
        {"id": "3", "length": 300_000},
        {"id": "4", "length": 5},
    ]
    assert stats["finish_reason"] == "finished"
    assert "spider_exceptions/count" not in stats
    assert csv.field_size_limit() == before


async def test_a_feed_of_bare_carriage_returns_is_rows() -> None:
    """Old Mac exports end lines with \\r alone: rows, not one unreadable line (quoted
    line breaks stay in their field)."""
    body = b'id,text\r1,one\r2,"two\rlines"\r3,three\r'
    site = Site({"/mac.csv": ("text/csv", body)})
    base = site.base

    class Spider(CSVFeedSpider):
        name = "mac"
        start_urls = [base + "/mac.csv"]

        def parse_row(self, response: Response, row: dict[str, str]) -> Any:
            return row

    items, _ = await crawl_items(Spider, site.settings)
    assert items == [
        {"id": "1", "text": "one"},
        {"id": "2", "text": "two\rlines"},
        {"id": "3", "text": "three"},
    ]


def test_an_unreadable_row_is_skipped_with_a_warning_naming_its_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    response = Response("http://x/f.csv", body=b"")
    lines = ["a,b\n", "1," + "y" * 50 + "\n", "2,ok\n", "3," + "z" * 50 + "\n", "4,end\n"]
    with caplog.at_level(logging.WARNING):
        rows = list(_readable_rows(csv.reader(lines), 20, response))
    assert rows == [["a", "b"], ["2", "ok"], ["4", "end"]]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "line 2 of" in warnings[0] and "field larger than field limit" in warnings[0]
    assert "line 4 of" in warnings[1]


def test_iternodes_with_registered_namespaces_matches_xml() -> None:
    class Spider(XMLFeedSpider):
        name = "ns"
        itertag = "url"
        namespaces = (
            ("a", "http://www.google.com/schemas/sitemap/0.84"),
            ("b", "http://www.example.com/schemas/extras/1.0"),
        )

        def parse_node(self, response: Response, selector: Any) -> Any:
            return {
                "loc": selector.xpath("a:loc/text()").getall(),
                "updated": selector.xpath("b:updated/text()").getall(),
                "other": selector.xpath("other/@value").getall(),
                "custom": selector.xpath("other/@b:custom").getall(),
            }

    expected = [
        {
            "loc": ["http://www.example.com/Special-Offers.html"],
            "updated": ["2009-08-16"],
            "other": ["bar"],
            "custom": ["fuu"],
        },
        {"loc": [], "updated": ["2009-08-16"], "other": ["foo"], "custom": []},
    ]
    response = xml_response(NAMESPACED)
    for iterator in ("iternodes", "xml"):
        spider = Spider(iterator=iterator)
        nodes = list(spider._nodes(response))
        assert [spider.parse_node(response, n) for n in nodes] == expected, iterator


def test_prefixed_itertag_is_resolved_from_the_document() -> None:
    nodes = list(xml_nodes(xml_response(NAMESPACED), "x:loc"))
    assert [n.xpath("text()").get() for n in nodes] == [
        "http://www.example.com/Special-Offers.html"
    ]


def test_the_html_iterator_reads_the_page_as_html() -> None:
    class Spider(XMLFeedSpider):
        name = "html"
        iterator = "html"
        itertag = "li"

    body = b"<html><body><ul><li>one<li>two</ul></body></html>"  # unclosed, as HTML allows
    response = Response("http://x/", headers={"Content-Type": "text/html"}, body=body)
    nodes = Spider()._nodes(response)
    assert [n.xpath("text()").get() for n in nodes] == ["one", "two"]


def test_an_unknown_iterator_is_refused() -> None:
    class Spider(XMLFeedSpider):
        name = "bad"
        iterator = "sax"

    with pytest.raises(ValueError, match="sax"):
        Spider()


def test_xml_nodes_are_cleared_as_they_are_read() -> None:
    body = b"<feed>" + b"".join(b"<item><v>%d</v></item>" % n for n in range(1000)) + b"</feed>"
    seen = []
    for node in xml_nodes(xml_response(body), "item"):
        seen.append(node.xpath("v/text()").get())
        assert node.root.getparent() is None  # its own small document, not the feed's
    assert seen == [str(n) for n in range(1000)]


def test_xml_entities_are_not_expanded() -> None:
    body = b"""<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaaaaaaaa">
<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><f><item>&b;</item></f>"""
    nodes = list(xml_nodes(xml_response(body), "item"))
    assert "aaaa" not in (nodes[0].xpath("string()").get() or "")


def test_csv_rows_decode_piecewise_across_chunk_boundaries() -> None:
    row = "é" * 40_000  # two-byte characters straddle the 64 KiB pieces
    body = f"h\n{row}\n{row}\r\n".encode()
    response = Response("http://x/f.csv", headers={"Content-Type": "text/csv"}, body=body)
    assert list(csv_rows(response)) == [{"h": row}, {"h": row}]


def test_csv_without_a_declared_encoding_falls_back_to_cp1252() -> None:
    response = Response("http://x/f.csv", body="h\nCaf\xe9\n".encode("cp1252"))
    assert list(csv_rows(response)) == [{"h": "Café"}]


@pytest.mark.slow  # 30,000 rows under tracemalloc: seconds on an idle machine
def test_csv_rows_never_hold_the_decoded_body() -> None:
    body = b"id,text\n" + b"".join(b"%d,%s\n" % (n, b"x" * 90) for n in range(30_000))
    assert len(body) > 2_800_000
    response = Response("http://x/f.csv", headers={"Content-Type": "text/csv"}, body=body)
    tracemalloc.start()
    try:
        count = sum(1 for _ in csv_rows(response))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 30_000
    assert peak < len(body) // 3, peak  # a few 64 KiB pieces, not a 3 MB string


def test_plain_callbacks_keep_scrapys_plain_generators() -> None:
    class Items(XMLFeedSpider):
        name = "plain"

        def parse_item(self, response: Response, selector: Any) -> Any:  # Scrapy's old name
            return {"title": selector.xpath("title/text()").get()}

    class Rows(CSVFeedSpider):
        name = "rows"

        def parse_row(self, response: Response, row: dict[str, str]) -> Any:
            return row

    assert list(Items()._parse(xml_response(RSS))) == [{"title": "First"}, {"title": "Second é"}]
    table = Response("http://x/t.csv", headers={"Content-Type": "text/csv"}, body=b"a\n1\n2\n")
    assert list(Rows().parse_rows(table)) == [{"a": "1"}, {"a": "2"}]


async def test_async_parse_node() -> None:
    site = Site({"/feed.xml": ("application/xml", RSS)})
    base = site.base

    class Spider(XMLFeedSpider):
        name = "async"
        start_urls = [base + "/feed.xml"]

        async def parse_node(self, response: Response, selector: Any) -> Any:
            yield {"title": selector.xpath("title/text()").get()}

        def process_results(self, response: Response, results: Any) -> Any:
            return [{**r, "n": len(results)} for r in results]

    items, _ = await crawl_items(Spider, site.settings)
    assert items == [{"title": "First", "n": 1}, {"title": "Second é", "n": 1}]


async def test_a_missing_parse_row_is_a_spider_error() -> None:
    site = Site({"/t.csv": ("text/csv", b"id\n1\n")})
    base = site.base

    class Spider(CSVFeedSpider):
        name = "missing"
        start_urls = [base + "/t.csv"]

    items, stats = await crawl_items(Spider, site.settings)
    assert items == []
    assert stats["spider_exceptions/NotImplementedError"] == 1


def test_nested_nodes_come_whole_inner_first() -> None:
    body = b"<f><item><title>B</title><item>inner</item></item><item>last</item></f>"
    nodes = [n.get() for n in xml_nodes(xml_response(body), "item")]
    assert nodes == [
        "<item>inner</item>",
        "<item><title>B</title><item/></item>",
        "<item>last</item>",
    ]
