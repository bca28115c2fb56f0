"""``LxmlParserLinkExtractor`` (Scrapy's low-level parser): one tag's attribute, no
rules, repeats judged by canonical URL."""

from __future__ import annotations

from skitter.http import HtmlResponse, Link
from skitter.linkextractors.lxmlhtml import LxmlParserLinkExtractor

BODY = (
    b'<a href="/p?b=2&amp;a=1">1</a><a href="/p?a=1&amp;b=2">2</a>'
    b'<a href="mailto:x@a.example">m</a><img src="/i.png"><area href="/z.pdf">'
)


def test_every_link_of_the_tag_whatever_its_scheme() -> None:
    response = HtmlResponse("http://a.example/", body=BODY)
    assert [link.url for link in LxmlParserLinkExtractor().extract_links(response)] == [
        "http://a.example/p?b=2&a=1",
        "http://a.example/p?a=1&b=2",
        "mailto:x@a.example",
    ]


def test_unique_by_canonical_url_unless_canonicalized() -> None:
    response = HtmlResponse("http://a.example/", body=BODY)
    unique = LxmlParserLinkExtractor(unique=True).extract_links(response)
    assert unique[0] == Link("http://a.example/p?b=2&a=1", "1")
    assert len(unique) == 2
    assert (
        len(LxmlParserLinkExtractor(unique=True, canonicalized=True).extract_links(response)) == 3
    )


def test_tag_and_attr_predicates() -> None:
    response = HtmlResponse("http://a.example/", body=BODY)
    lx = LxmlParserLinkExtractor(
        tag=lambda t: t in ("img", "area"), attr=lambda a: a in ("src", "href")
    )
    assert [link.url for link in lx.extract_links(response)] == [
        "http://a.example/i.png",
        "http://a.example/z.pdf",
    ]
