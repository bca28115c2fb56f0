"""SitemapSpider end to end: robots.txt, a sitemap index, gzip sitemaps, rules,
follow, alternates, filter; and the parser's safety (entities, gzip bombs)."""

from __future__ import annotations

import gzip
import logging
import subprocess
import sys
from typing import Any

import pytest

from skitter import Response
from skitter.spiders import SitemapSpider
from skitter.spiders._sitemaps import Sitemap, SitemapTooLarge, gunzip, sitemap_urls_from_robots

from ._site import Site, crawl_items

XML = "application/xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
XHTML = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def urlset(*locs: str, alternates: dict[str, str] | None = None) -> bytes:
    entries = []
    for loc in locs:
        alt = ""
        if alternates and loc in alternates:
            alt = f'<xhtml:link rel="alternate" hreflang="de" href="{alternates[loc]}"/>'
        entries.append(
            f"<url><loc>{loc}</loc><lastmod>2024-0{len(entries) + 1}-01</lastmod>{alt}</url>"
        )
    return f'<?xml version="1.0"?><urlset {NS} {XHTML}>{"".join(entries)}</urlset>'.encode()


def index(*locs: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex {NS}>{entries}</sitemapindex>'.encode()


def page(title: str) -> str:
    return f"<h1>{title}</h1>"


async def practice_site(serve: Any) -> tuple[Site, str]:
    site = Site({})
    base = await serve(site.app)
    site.pages.update(
        {
            "/robots.txt": (
                "text/plain",
                f"User-agent: *\nSitemap: {base}/sitemap_index.xml\n".encode(),
            ),
            "/sitemap_index.xml": (
                XML,
                index(
                    f"{base}/sitemap-quotes.xml.gz",
                    f"{base}/sitemap-authors.xml",
                    f"{base}/sitemap-skip.xml",
                ),
            ),
            "/sitemap-quotes.xml.gz": (
                "application/gzip",
                gzip.compress(urlset(f"{base}/quote/1", f"{base}/quote/2")),
            ),
            "/sitemap-authors.xml": (
                XML,
                urlset(
                    f"{base}/author/ada",
                    f"{base}/tag/x",
                    alternates={f"{base}/author/ada": f"{base}/de/author/ada"},
                ),
            ),
            "/sitemap-skip.xml": (XML, urlset(f"{base}/quote/99")),
            "/quote/1": page("q1"),
            "/quote/2": page("q2"),
            "/quote/99": page("q99"),
            "/author/ada": page("ada"),
            "/de/author/ada": page("ada (de)"),
            "/tag/x": page("tag"),
        }
    )
    return site, base


class Quotes(SitemapSpider):
    name = "sitemap"
    sitemap_rules = [("/quote/", "parse_quote"), ("/author/", "parse_author")]
    sitemap_follow = ["quotes", "authors"]

    def parse_quote(self, response: Response) -> Any:
        yield {"quote": response.css("h1::text").get()}

    def parse_author(self, response: Response) -> Any:
        yield {"author": response.css("h1::text").get()}


async def test_robots_index_gzip_rules_and_follow(serve: Any) -> None:
    site, base = await practice_site(serve)

    class Spider(Quotes):
        sitemap_urls = [base + "/robots.txt"]

    items, stats = await crawl_items(Spider)
    assert sorted(map(str, items)) == sorted(
        map(str, [{"quote": "q1"}, {"quote": "q2"}, {"author": "ada"}])
    )
    assert site.hits["/sitemap-skip.xml"] == 0  # not in sitemap_follow
    assert site.hits["/tag/x"] == 0  # no rule matches
    assert stats["finish_reason"] == "finished"


async def test_alternate_links_and_sitemap_filter(serve: Any) -> None:
    _site, base = await practice_site(serve)

    class Spider(Quotes):
        sitemap_urls = [base + "/sitemap-authors.xml", base + "/sitemap-quotes.xml.gz"]
        sitemap_alternate_links = True

        def sitemap_filter(self, entries: Any) -> Any:
            for entry in entries:
                if entry.get("lastmod", "") >= "2024-02-01" or "author" in entry["loc"]:
                    yield entry

    items, _ = await crawl_items(Spider)
    assert sorted(map(str, items)) == sorted(
        map(str, [{"author": "ada"}, {"author": "ada (de)"}, {"quote": "q2"}])
    )


async def test_default_rule_sends_everything_to_parse(serve: Any) -> None:
    _site, base = await practice_site(serve)

    class Spider(SitemapSpider):
        name = "default"
        sitemap_urls = [base + "/sitemap-skip.xml"]

        def parse(self, response: Response) -> Any:
            return {"url": response.url}

    items, _ = await crawl_items(Spider)
    assert items == [{"url": base + "/quote/99"}]


async def test_a_gzip_bomb_is_cut_at_download_maxsize(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _site, base = await practice_site(serve)
    big = urlset(*(f"{base}/quote/{n}" for n in range(20_000)))
    assert len(big) > 1_000_000
    bomb = gzip.compress(big)
    _site.pages["/bomb.xml.gz"] = ("application/octet-stream", bomb)

    class Spider(Quotes):
        sitemap_urls = [base + "/bomb.xml.gz"]

    with caplog.at_level(logging.WARNING, logger="skitter.spiders.sitemap"):
        items, _ = await crawl_items(Spider, {"DOWNLOAD_MAXSIZE": len(bomb) + 100_000})
    assert items == []
    assert "DOWNLOAD_MAXSIZE" in caplog.text


async def test_a_page_that_is_not_a_sitemap_is_ignored_loudly(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _site, base = await practice_site(serve)

    class Spider(Quotes):
        sitemap_urls = [base + "/quote/1"]

    with caplog.at_level(logging.WARNING, logger="skitter.spiders.sitemap"):
        items, _ = await crawl_items(Spider)
    assert items == []
    assert "Ignoring invalid sitemap" in caplog.text


def test_gunzip_stops_at_the_limit_and_refuses_corrupt_data() -> None:
    data = gzip.compress(b"x" * 10_000_000)
    with pytest.raises(SitemapTooLarge):
        gunzip(data, 1_000_000)
    assert gunzip(data, None) == b"x" * 10_000_000
    with pytest.raises(ValueError, match="ended before"):
        gunzip(data[:-20], None)


def test_entities_are_not_expanded() -> None:
    body = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY ext SYSTEM "file:///etc/passwd">]>
<urlset><url><loc>http://x/&b;</loc></url><url><loc>http://y/&ext;</loc></url></urlset>"""
    locs = [entry["loc"] for entry in Sitemap(body)]
    assert all("aaaa" not in loc and "root:" not in loc for loc in locs), locs


def test_sitemap_entries_and_type() -> None:
    body = urlset("http://a/1", "http://a/2", alternates={"http://a/1": "http://a/de/1"})
    sitemap = Sitemap(body)
    assert sitemap.type == "urlset"
    assert list(sitemap) == [
        {"loc": "http://a/1", "lastmod": "2024-01-01", "alternate": ["http://a/de/1"]},
        {"loc": "http://a/2", "lastmod": "2024-02-01"},
    ]
    assert Sitemap(index("http://a/s.xml")).type == "sitemapindex"
    assert Sitemap(b"not xml").type == ""


def test_robots_sitemap_lines() -> None:
    robots = b"User-agent: *\nDisallow: /x\n  SITEMAP: /s1.xml\nsitemap:http://o/s2.xml\nSitemap:\n"
    assert list(sitemap_urls_from_robots(robots, "http://h/robots.txt")) == [
        "http://h/s1.xml",
        "http://o/s2.xml",
    ]


def test_which_bodies_are_sitemaps() -> None:
    spider = Quotes()
    xml = urlset("http://a/1")

    def body(url: str, data: bytes, content_type: str | None = None) -> bytes | None:
        headers = {"Content-Type": content_type} if content_type else {}
        return spider._get_sitemap_body(Response(url, headers=headers, body=data))

    assert body("http://a/s", xml, "text/xml; charset=utf-8") == xml
    assert body("http://a/s", xml, "text/html") is None
    assert body("http://a/favicon.ico", xml) is None
    assert body("http://a/s.xml", xml, "text/plain") == xml
    assert body("http://a/s.xml.gz", xml) == xml  # inflated already (Content-Encoding)
    assert body("http://a/s", gzip.compress(xml), "application/gzip") == xml


def test_a_spider_may_override_get_sitemap_body() -> None:
    class Fixing(Quotes):
        def _get_sitemap_body(self, response: Response) -> bytes | None:
            return response.body.replace(b"<broken>", b"")

    response = Response("http://a/s", body=b"<broken>" + urlset("http://a/quote/1"))
    assert [r.url for r in Fixing()._parse_sitemap(response)] == ["http://a/quote/1"]


def test_importing_the_spider_kinds_does_not_load_the_downloader() -> None:
    code = (
        "import sys, skitter.spiders, skitter.linkextractors, skitter.loader, skitter.item; "
        "print(sorted(m for m in ('aiohttp', 'skitter.downloader') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
