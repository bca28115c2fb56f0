"""Differential tests: skitter's link extractor, sitemap parser and feed iterators give
what Scrapy's own give on the same bytes. They run when Scrapy is installed (the
``bench`` extra: ``pip install -e '.[bench]'``) and are skipped otherwise."""

from __future__ import annotations

import random
from typing import Any

import pytest

from skitter.http import Response
from skitter.linkextractors import LinkExtractor
from skitter.spiders._iterators import csv_rows, xml_nodes
from skitter.spiders._sitemaps import Sitemap

scrapy_http = pytest.importorskip("scrapy.http")
scrapy_linkextractors = pytest.importorskip("scrapy.linkextractors")
scrapy_sitemap = pytest.importorskip("scrapy.utils.sitemap")
scrapy_iterators = pytest.importorskip("scrapy.utils.iterators")

URL = "http://shop.example.com/cat/1/list.html"
ODD = """<html><head><base href="/base/dir/"></head><body>
<a href=" x y.html ">space</a><a href="HTTP://Ex.COM:80/A">upper</a>
<a href="//cdn.example.com/a.PDF?x">pdf</a><a href="?q=1">query</a><a href="#frag">frag</a>
<a href="café.html">é</a><a href="http://[::1]:8080/v6">v6</a><a href="a.html;jsessionid=1">s</a>
<a href="">empty</a><a>none</a><a href="/a%20b">pct</a><a href="/x?a=é&amp;b=%zz">qq</a>
<a href="http://ex.com/?#">odd</a><area href="/area" rel="nofollow"><a href="ftp://f.example.com/x">
ftp</a><a href="file:///etc/x">file</a><a href="data:text/plain,x">data</a>
<a href="../up.html">up <b>bold</b> tail</a></body></html>"""


def pages() -> list[bytes]:
    rng = random.Random(7)
    out = [ODD.encode()]
    for _ in range(10):
        hrefs = [
            rng.choice(
                [
                    f"/cat/{rng.randint(0, 9)}/item-{rng.randint(0, 999)}.html?p={rng.random()}",
                    f"../related/{rng.randint(0, 99)}.html",
                    f"/static/img-{rng.randint(0, 9)}.jpg",
                    f"https://other.example.org/{rng.randint(0, 9)}#top",
                ]
            )
            for _ in range(60)
        ]
        anchors = "".join(f'<a href="{h}">Item {i} <i>{i % 3}</i></a>' for i, h in enumerate(hrefs))
        out.append(f"<html><body><ul>{anchors}</ul></body></html>".encode())
    return out


OPTIONS: list[dict[str, Any]] = [
    {},
    {"allow": r"/cat/"},
    {"deny": r"item-\d+5", "allow_domains": "example.com"},
    {"deny_extensions": []},
    {"canonicalize": True},
    {"unique": False},
    {"restrict_xpaths": "//ul"},
    {"restrict_css": "ul a:nth-child(odd)"},
    {"tags": "*", "attrs": "*", "deny_extensions": []},
    {"restrict_text": r"Item 1\d"},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_link_extractor_matches_scrapys(options: dict[str, Any]) -> None:
    ours, theirs = LinkExtractor(**options), scrapy_linkextractors.LinkExtractor(**options)
    headers = {"Content-Type": "text/html; charset=utf-8"}
    for body in pages():
        mine = [
            (x.url, x.text, x.nofollow)
            for x in ours.extract_links(Response(URL, headers=headers, body=body))
        ]
        scrapy_response = scrapy_http.HtmlResponse(URL, body=body, encoding="utf-8")
        expected = [(x.url, x.text, x.nofollow) for x in theirs.extract_links(scrapy_response)]
        assert mine == expected


SITEMAPS = [
    b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc> http://a/1 </loc><lastmod>2020</lastmod><xhtml:link rel="alternate" href="http://a/de/1"/>
<!-- c --></url><url><loc></loc></url><url><priority>1</priority></url>
<url><loc>http://a/2</loc><changefreq/></url></urlset>""",
    b"<sitemapindex><sitemap><loc>http://a/s1.xml</loc></sitemap>"
    b"<sitemap><loc>http://a/s2.xml</loc><lastmod>x</lastmod></sitemap></sitemapindex>",
    b"<urlset><url><loc>http://a/broken</loc></url><url><loc>http://a/cut",
]


@pytest.mark.parametrize("body", SITEMAPS)
def test_sitemap_entries_match_scrapys(body: bytes) -> None:
    ours, theirs = Sitemap(body), scrapy_sitemap.Sitemap(body)
    assert ours.type == theirs.type
    assert list(ours) == list(theirs)


RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title>
<item id="1"><title>A</title><dc:creator>x</dc:creator></item>
<item><title>B &amp; C</title><item>nested</item></item></channel></rss>"""


@pytest.mark.parametrize("tag", ["item", "dc:creator", "title"])
def test_xml_nodes_match_scrapys(tag: str) -> None:
    ours = xml_nodes(Response("http://x/", headers={"Content-Type": "text/xml"}, body=RSS), tag)
    theirs = scrapy_iterators.xmliter_lxml(scrapy_http.XmlResponse("http://x/", body=RSS), tag)
    assert [n.get() for n in ours] == [n.get() for n in theirs]


def test_csv_rows_match_scrapys() -> None:
    body = 'a,b\n1,"x\ny"\n2,3,4\n"q""r",s\r\n\n5,é'.encode()
    ours = csv_rows(Response("http://x/", headers={"Content-Type": "text/csv"}, body=body))
    theirs = scrapy_iterators.csviter(
        scrapy_http.TextResponse("http://x/", body=body, encoding="utf-8")
    )
    assert list(ours) == list(theirs)
