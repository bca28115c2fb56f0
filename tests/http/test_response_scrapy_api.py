"""Scrapy's Response API details: read-only url and body, the page's encoding on the
requests it follows and on its copies, which selections ``follow`` takes, and a
selector that knows its response without keeping it alive."""

from __future__ import annotations

import gc
import weakref

import pytest

from skitter.http import HtmlResponse, Response, TextResponse, XmlResponse
from skitter.selector import Selector

LINKS = b'<div id="d"><a href="/a">a</a><img src="/i.png"></div>'


def test_a_status_given_as_text_is_a_number() -> None:
    assert Response("http://127.0.0.1/", status="301").status == 301  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid literal"):
        Response("http://127.0.0.1/", status="x")  # type: ignore[arg-type]


def test_url_and_body_are_read_only() -> None:
    # The text, selector and link base are cached from them: a new url or body is a
    # new response, made by replace().
    response = HtmlResponse("http://127.0.0.1/", body=b"<p>x</p>")
    with pytest.raises(AttributeError, match=r"replace\(url="):
        response.url = "http://127.0.0.1/other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match=r"replace\(body="):
        response.body = b"<p>y</p>"  # type: ignore[misc]
    assert response.replace(body=b"<p>y</p>").css("p::text").get() == "y"


def test_flags_are_made_on_first_read_and_kept() -> None:
    response = Response("http://127.0.0.1/")
    response.flags.append("cached")
    assert response.flags == ["cached"]
    response.flags = None  # type: ignore[assignment]
    assert response.flags == []


def test_a_followed_request_has_the_pages_encoding() -> None:
    page = HtmlResponse("http://127.0.0.1/", body=LINKS, encoding="cp1251")
    assert page.follow("/b").encoding == "cp1251"
    assert page.follow("/b", encoding=None).encoding == "cp1251"
    assert page.follow("/b", encoding="utf-8").encoding == "utf-8"
    assert [r.encoding for r in page.follow_all(css="a")] == ["cp1251"]


def test_follow_all_checks_its_arguments_at_the_call() -> None:
    page = HtmlResponse("http://127.0.0.1/", body=LINKS)
    with pytest.raises(ValueError, match="exactly one of the following arguments"):
        page.follow_all(css="a", xpath="//a")  # not iterated: refused all the same
    with pytest.raises(TypeError):
        page.follow_all(urls=12345)  # type: ignore[arg-type]


def test_follow_takes_links_and_elements_with_src_but_not_other_elements() -> None:
    page = HtmlResponse("http://127.0.0.1/", body=LINKS)
    assert page.follow(page.css("a")[0]).url == "http://127.0.0.1/a"
    assert page.follow(page.css("img")[0]).url == "http://127.0.0.1/i.png"
    with pytest.raises(ValueError, match=r"Only <a> and <link> elements .* got <div>"):
        page.follow(page.css("div")[0])
    with pytest.raises(ValueError, match="Unsupported selector"):
        page.follow(page.xpath("count(//a)")[0])
    # follow_all skips what is not a link, as a link extractor would
    assert [r.url for r in page.follow_all(css="div, a")] == ["http://127.0.0.1/a"]


def test_a_new_body_keeps_the_pages_encoding_unless_given() -> None:
    body = b'<?xml version="1.0" encoding="iso-8859-1"?><x>\xe9</x>'
    feed = XmlResponse("http://127.0.0.1/f.xml", body=body)
    assert feed.replace(body=b"<x>\xe9</x>").text == "<x>\u00e9</x>"
    assert feed.replace(body=b"<x>y</x>", encoding="utf-8").encoding == "utf-8"
    given = TextResponse("http://127.0.0.1/", body="h\u00e9", encoding="cp852")
    assert given.replace(url="http://127.0.0.1/2").encoding == "cp852"


def test_the_default_encoding_of_a_class_is_tried_first() -> None:
    class Latin(TextResponse):
        _DEFAULT_ENCODING = "latin-1"

    assert Latin("http://127.0.0.1/", body=b"caf\xc3\xa9").text == "caf\u00c3\u00a9"
    assert TextResponse("http://127.0.0.1/", body=b"caf\xc3\xa9").text == "caf\u00e9"


def test_the_selector_knows_its_response_without_keeping_it_alive() -> None:
    response = HtmlResponse("http://127.0.0.1/", body=LINKS)
    selector = response.selector
    assert isinstance(selector, Selector)
    assert selector.response is response
    assert isinstance(response.css("a")[0], Selector)
    gone = weakref.ref(response)
    gc.disable()  # freed by reference counting alone: no cycle through the selector
    try:
        del response
        assert gone() is None
    finally:
        gc.enable()
    assert selector.response is None


def test_a_plain_text_response_of_json_reads_as_json() -> None:
    # Scrapy leaves the selector type of a TextResponse to parsel: JSON if it is JSON.
    response = TextResponse("http://127.0.0.1/", body=b'{"html": "<b>x</b>"}')
    assert response.selector.type == "json"
    assert response.jmespath("html").get() == "<b>x</b>"
    assert TextResponse("http://127.0.0.1/", body=b"<p>x</p>").selector.type == "html"
    assert HtmlResponse("http://127.0.0.1/", body=b'{"a": 1}').selector.type == "html"
