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


NOT_TEXT = ["base64", "hex", "rot13", "zlib", "bz2", "uu", "quopri", "x-unknown-charset"]


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_a_content_type_charset_that_is_not_a_text_encoding_is_ignored(charset: str) -> None:
    body = "<html><head><title>caf\u00e9</title></head></html>".encode()
    r = make(body, f"text/html; charset={charset}")
    assert r.encoding == "utf-8"  # detected, as if no charset were declared
    assert r.css("title::text").get() == "caf\u00e9"


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_then_the_meta_declaration_is_used(charset: str) -> None:
    body = '<meta charset="koi8-r"><p>\u043f\u0440\u0438\u0432\u0435\u0442</p>'.encode("koi8-r")
    r = make(body, f"text/html; charset={charset}")
    assert r.encoding == "koi8-r"
    assert r.css("p::text").get() == "\u043f\u0440\u0438\u0432\u0435\u0442"


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_a_meta_charset_that_is_not_a_text_encoding_is_ignored(charset: str) -> None:
    body = f'<html><head><meta charset="{charset}"></head><p>\u20ac</p></html>'.encode("cp1252")
    r = make(body)
    assert r.encoding == "cp1252"
    assert r.css("p::text").get() == "\u20ac"
    xml = f'<?xml version="1.0" encoding="{charset}"?><a>\u00e9</a>'.encode()
    assert make(xml, "application/xml").xpath("//a/text()").get() == "\u00e9"


def test_a_bom_still_wins_over_a_bad_charset() -> None:
    body = "\ufeff<p>\u00fc</p>".encode("utf-16-le")
    assert make(body, "text/html; charset=base64").css("p::text").get() == "\u00fc"


def test_utf16_without_bom_is_big_endian() -> None:
    r = make("<p>\u00fc</p>".encode("utf-16-be"), "text/html; charset=utf-16")
    assert r.encoding == "utf-16-be"
    assert r.css("p::text").get() == "\u00fc"


def test_an_explicit_encoding_is_used_and_must_be_a_text_encoding() -> None:
    r = Response("http://e.com", body="caf\u00e9".encode("latin-1"), encoding="latin-1")
    assert (r.encoding, r.text) == ("latin-1", "caf\u00e9")
    for bad in ("base64", "rot13", "no-such-charset"):
        with pytest.raises(ValueError, match="not a known text encoding"):
            Response("http://e.com", body=b"x", encoding=bad)


def test_follow_all_gives_an_absolute_link_as_follow_does() -> None:
    r = make(
        b'<a href="http://b.com/y?">1</a><a href="HTTP://b.com/z">2</a><a href="http://b.com/w#">3</a>'
    )
    hrefs = r.css("a::attr(href)").getall()
    assert [q.url for q in r.follow_all(css="a")] == [r.follow(h).url for h in hrefs]
