"""skitter.linkextractors: Scrapy's LinkExtractor options on real pages."""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from w3lib.url import safe_url_string

from skitter import Response
from skitter.http import Link
from skitter.linkextractors import IGNORED_EXTENSIONS, LinkExtractor, LxmlLinkExtractor
from skitter.linkextractors._lxml import _safe
from skitter.linkextractors.lxmlhtml import LxmlLinkExtractor as FromScrapyPath

PAGE = """<html><head><title>t</title></head><body>
<div id="subwrapper">
  <a href="sample1.html">sample 1</a>
  <a href="sample2.html">sample 2<img src="sample2.jpg" alt="sample 2 image"></a>
</div>
<div class="links">
  <a href="http://example.com/sample3.html" title="sample 3">sample 3 text</a>
  <a href="sample3.html">sample 3 repetition</a>
  <a href="sample3.html#foo">sample 3 repetition with fragment</a>
  <a href="http://www.google.com/something">google</a>
  <a href="http://example.com/innertag.html"><strong>inner</strong> tag</a>
  <a href="page%204.html">href with whitespaces</a>
  <a href=" \n  sample4.html \t">stripped</a>
  <a href="http://other.example.com:8080/x.html" rel="nofollow external">nofollow</a>
  <a href="javascript:void(0)">js</a><a href="mailto:me@example.com">mail</a>
  <a href="doc.PDF">pdf</a><a href="archive.tar.gz">tarball</a>
  <area href="area.html">
</div>
</body></html>"""


def response(body: str = PAGE, url: str = "http://example.com/index.html") -> Response:
    return Response(url, headers={"Content-Type": "text/html; charset=utf-8"}, body=body.encode())


def urls(links: list[Link]) -> list[str]:
    return [link.url for link in links]


def test_default_extraction_in_document_order() -> None:
    links = LinkExtractor().extract_links(response())
    assert links[:4] == [
        Link("http://example.com/sample1.html", "sample 1"),
        Link("http://example.com/sample2.html", "sample 2"),
        Link("http://example.com/sample3.html", "sample 3 text"),
        Link("http://example.com/sample3.html#foo", "sample 3 repetition with fragment"),
    ]
    assert urls(links[4:]) == [
        "http://www.google.com/something",
        "http://example.com/innertag.html",
        "http://example.com/page%204.html",
        "http://example.com/sample4.html",
        "http://other.example.com:8080/x.html",
        "http://example.com/area.html",
    ]
    assert links[5].text == "inner tag"
    assert [link.nofollow for link in links].count(True) == 1


def test_unique_false_keeps_repeats() -> None:
    links = LinkExtractor(unique=False).extract_links(response())
    assert urls(links).count("http://example.com/sample3.html") == 2


def test_with_unique_the_first_link_to_a_url_is_the_one_judged() -> None:
    body = '<a href="/a">skip me</a><a href="/a">take me</a>'
    assert LinkExtractor(restrict_text="take").extract_links(response(body)) == []
    kept = LinkExtractor(restrict_text="take", unique=False).extract_links(response(body))
    assert kept == [Link("http://example.com/a", "take me")]


def test_allow_deny_and_domains() -> None:
    page = response()
    assert urls(LinkExtractor(allow=r"sample\d").extract_links(page)) == [
        "http://example.com/sample1.html",
        "http://example.com/sample2.html",
        "http://example.com/sample3.html",
        "http://example.com/sample3.html#foo",
        "http://example.com/sample4.html",
    ]
    denied = urls(LinkExtractor(allow="sample", deny=[re.compile("3"), "4"]).extract_links(page))
    assert denied == ["http://example.com/sample1.html", "http://example.com/sample2.html"]
    google = LinkExtractor(allow_domains="google.com").extract_links(page)
    assert urls(google) == ["http://www.google.com/something"]
    other = LinkExtractor(allow_domains=["example.com"], deny_domains="other.example.com")
    assert not any("other." in u or "google" in u for u in urls(other.extract_links(page)))
    # a host with a port belongs to its domain; a domain given with a port means that port
    assert len(LinkExtractor(allow_domains="other.example.com").extract_links(page)) == 1
    assert len(LinkExtractor(allow_domains="other.example.com:8080").extract_links(page)) == 1
    assert len(LinkExtractor(allow_domains="other.example.com:9").extract_links(page)) == 0


def test_restrict_xpaths_css_and_text() -> None:
    page = response()
    assert urls(LinkExtractor(restrict_xpaths='//div[@id="subwrapper"]').extract_links(page)) == [
        "http://example.com/sample1.html",
        "http://example.com/sample2.html",
    ]
    assert urls(LinkExtractor(restrict_css="#subwrapper a:first-child").extract_links(page)) == [
        "http://example.com/sample1.html"
    ]
    # sample3.html's first link, "sample 3 text", is the one judged (as in Scrapy)
    assert urls(LinkExtractor(restrict_text=[r"repetition", "^google$"]).extract_links(page)) == [
        "http://example.com/sample3.html#foo",
        "http://www.google.com/something",
    ]
    # a selection that is text, not elements, holds no links
    assert LinkExtractor(restrict_xpaths="//a/@href").extract_links(page) == []


def test_tags_attrs_deny_tags() -> None:
    page = response()
    images = LinkExtractor(tags="img", attrs="src", deny_extensions=[]).extract_links(page)
    assert urls(images) == ["http://example.com/sample2.jpg"]
    assert LinkExtractor(tags="img", attrs="src").extract_links(page) == []  # jpg is ignored
    everything = urls(LinkExtractor(tags="*", attrs="*", deny_extensions=[]).extract_links(page))
    assert "http://example.com/sample2.jpg" in everything
    no_area = urls(LinkExtractor(tags="*", deny_tags="area").extract_links(page))
    assert "http://example.com/area.html" not in no_area and no_area


def test_deny_extensions_default_and_custom() -> None:
    page = response()
    found = urls(LinkExtractor().extract_links(page))
    assert not any(u.lower().endswith((".pdf", ".tar.gz")) for u in found)
    assert "pdf" in IGNORED_EXTENSIONS
    pdfs = urls(LinkExtractor(deny_extensions=["gz"], allow=r"\.(PDF|gz)").extract_links(page))
    assert pdfs == ["http://example.com/doc.PDF"]


def test_extensions_are_judged_on_the_path_alone() -> None:
    body = """<a href="/a.pdf;jsessionid=1">p</a><a href="/view?file=a.pdf">v</a>
    <a href="/a;v=1/b.ZIP">z</a><a href="http://files.js/">host</a><a href="/x.html#y.png">f</a>"""
    assert urls(LinkExtractor().extract_links(response(body))) == [
        "http://example.com/view?file=a.pdf",
        "http://files.js/",
        "http://example.com/x.html#y.png",
    ]


def test_canonicalize_process_value_and_strip() -> None:
    body = """<a href="/b?z=1&a=2#frag">x</a><a href="javascript:go('/c.html')">y</a>
    <a href=" /d.html ">d</a>"""
    page = response(body)
    canonical = urls(LinkExtractor(canonicalize=True).extract_links(page))
    assert canonical == ["http://example.com/b?a=2&z=1", "http://example.com/d.html"]

    def unjs(value: str) -> str | None:
        m = re.search(r"javascript:go\('(.*?)'\)", value)
        return m.group(1) if m else None

    assert urls(LinkExtractor(process_value=unjs).extract_links(page)) == [
        "http://example.com/c.html"
    ]
    unstripped = urls(LinkExtractor(strip=False, allow="d.html").extract_links(page))
    assert unstripped == ["http://example.com/%20/d.html%20"] or unstripped == [
        safe_url_string(page.urljoin(" /d.html "))
    ]


def test_base_href_and_non_ascii_links() -> None:
    body = '<head><base href="http://cdn.example.org/root/"></head><a href="é/ü.html?q=ñ">x</a>'
    links = LinkExtractor().extract_links(response(body))
    assert urls(links) == ["http://cdn.example.org/root/%C3%A9/%C3%BC.html?q=%C3%B1"]


def test_links_are_plain_strings_the_frontier_can_store() -> None:
    link = LinkExtractor().extract_links(response())[0]
    assert type(link.text) is str and type(link.url) is str


def test_matches_and_aliases() -> None:
    extractor = LinkExtractor(allow="/item/", deny="draft", allow_domains="example.com")
    assert extractor.matches("http://example.com/item/1")
    assert not extractor.matches("http://example.com/item/draft")
    assert not extractor.matches("http://other.org/item/1")
    assert LinkExtractor is LxmlLinkExtractor is FromScrapyPath


def test_xhtml_documents() -> None:
    body = (
        '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">'
        '<body><a href="x.html">x</a></body></html>'
    )
    page = Response(
        "http://example.com/", headers={"Content-Type": "application/xml"}, body=body.encode()
    )
    assert urls(LinkExtractor().extract_links(page)) == ["http://example.com/x.html"]


@pytest.mark.slow  # a large search: seconds even on an idle machine
@settings(max_examples=2000)
@given(
    st.sampled_from(["http://", "https://"]),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30),
)
def test_the_fast_path_equals_safe_url_string(scheme: str, rest: str) -> None:
    url = scheme + rest
    try:
        expected = safe_url_string(url, encoding="utf-8")
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            _safe(url, "utf-8")  # refused the same way: the link is skipped
        return
    assert _safe(url, "utf-8") == expected


def test_an_extractor_can_be_pickled() -> None:
    extractor = LinkExtractor(allow=["sample", "google"], deny="3", restrict_css="div.links")
    copy = pickle.loads(pickle.dumps(extractor))
    page = response()
    assert copy.extract_links(page) == extractor.extract_links(page)
    assert copy.extract_links(page)
