"""Response decoding, selectors and link following."""

from __future__ import annotations

import pytest

from skitter import Request, Response


def make(
    body: bytes, content_type: str = "text/html", url: str = "http://e.com/dir/page"
) -> Response:
    return Response(url, 200, {"Content-Type": content_type}, body, Request(url))


def test_charset_from_header_wins_over_meta() -> None:
    body = '<meta charset="utf-8"><p>caf\u00e9</p>'.encode("latin-1")
    r = make(body, "text/html; charset=ISO-8859-1")
    assert r.css("p::text").get() == "caf\u00e9"
    assert r.encoding == "cp1252"  # w3lib maps latin-1 to its superset, as browsers do


def test_charset_from_meta_when_header_is_silent() -> None:
    body = '<html><head><meta charset="iso-8859-1"></head><p>cr\u00e8me</p>'.encode("latin-1")
    assert make(body).css("p::text").get() == "cr\u00e8me"


def test_undeclared_bytes_fall_back_to_utf8_then_cp1252() -> None:
    assert make("<p>\u20ac</p>".encode()).css("p::text").get() == "\u20ac"
    assert make("<p>\u20ac</p>".encode("cp1252")).css("p::text").get() == "\u20ac"


def test_bom_wins() -> None:
    body = "\ufeff<p>\u00fc</p>".encode("utf-16-le")
    assert make(body, "text/html; charset=latin-1").css("p::text").get() == "\u00fc"


def test_broken_html_still_parses() -> None:
    r = make(b"<html><div class=x><p>one<p>two</div></span><<<>")
    assert r.css("div.x p::text").getall() == ["one", "two"]


def test_json() -> None:
    assert make(b'{"a": [1, 2]}', "application/json").json() == {"a": [1, 2]}
    with pytest.raises(ValueError, match=r"\w"):
        make(b"not json", "application/json").json()


def test_xpath_and_xml() -> None:
    r = make(b"<?xml version='1.0'?><feed><entry>1</entry></feed>", "application/xml")
    assert r.xpath("//entry/text()").get() == "1"


def test_urljoin_uses_base_href() -> None:
    r = make(b'<html><head><base href="http://cdn.e.com/root/"></head></html>')
    assert r.urljoin("x.html") == "http://cdn.e.com/root/x.html"
    assert make(b"<p></p>").urljoin("x.html") == "http://e.com/dir/x.html"


def test_follow_and_follow_all() -> None:
    r = make(
        b'<a href="a.html">A</a><a href="/b">B</a><a href="mailto:x@e.com">m</a>'
        b'<a href="javascript:void(0)">j</a><a href="#top">t</a><a>no href</a>'
        b'<a href=" http://other.org/c ">C</a><img src="i.png">'
    )
    urls = [req.url for req in r.follow_all(css="a")]
    assert urls == ["http://e.com/dir/a.html", "http://e.com/b", "http://other.org/c"]
    assert [q.url for q in r.follow_all(xpath="//a/@href")][:2] == urls[:2]
    assert r.follow(r.css("img")[0]).url == "http://e.com/dir/i.png"
    req = r.follow("a.html", priority=4, meta={"k": 1})
    assert (req.priority, req.meta) == (4, {"k": 1})
    with pytest.raises(ValueError, match="exactly one"):
        list(r.follow_all())


def test_meta_and_cb_kwargs_are_the_requests() -> None:
    req = Request("http://e.com", meta={"a": 1}, cb_kwargs={"b": 2})
    r = Response("http://e.com", request=req)
    assert r.meta is req.meta and r.cb_kwargs is req.cb_kwargs
