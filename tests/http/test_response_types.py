"""Response subclasses: built as Scrapy code builds them, picked by the downloader
from what it downloaded as Scrapy's responsetypes picks them, followed like Scrapy's."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter.downloader import AiohttpTransport
from skitter.http import (
    HtmlResponse,
    JsonResponse,
    Link,
    Request,
    Response,
    TextResponse,
    XmlResponse,
    response_class,
)


# -- building them -------------------------------------------------------------------------
def test_html_response_from_a_str_body_and_encoding() -> None:
    r = HtmlResponse(url="http://e.com/", body="<p>caf\u00e9</p>", encoding="latin-1")
    assert r.body == b"<p>caf\xe9</p>"
    assert r.css("p::text").get() == "caf\u00e9"
    assert isinstance(r, TextResponse) and isinstance(r, Response)


def test_a_str_body_without_an_encoding_is_refused() -> None:
    with pytest.raises(TypeError, match="needs encoding="):
        HtmlResponse("http://e.com/", body="<p>x</p>")
    with pytest.raises(ValueError, match="not a known text encoding"):
        HtmlResponse("http://e.com/", body="<p>x</p>", encoding="rot13")


def test_the_class_fixes_the_selector_type_whatever_the_header_says() -> None:
    xml = b"<root><Item>one</Item></root>"
    assert XmlResponse("http://e.com/", body=xml).xpath("//Item/text()").get() == "one"
    # As HTML, lxml lower-cases tag names: //Item finds nothing.
    assert HtmlResponse("http://e.com/", body=xml).xpath("//Item/text()").get() is None
    plain = Response("http://e.com/", headers={"Content-Type": "text/xml"}, body=xml)
    assert plain.xpath("//Item/text()").get() == "one"  # as before: by Content-Type
    data = JsonResponse("http://e.com/", body=b'{"a": {"b": 2}}')
    assert data.selector.jmespath("a.b").get() == 2 and data.json() == {"a": {"b": 2}}


def test_replace_keeps_the_class_unless_told() -> None:
    r = HtmlResponse("http://e.com/", body=b"<p>x</p>", status=404)
    again = r.replace(body=b"<p>y</p>")
    assert type(again) is HtmlResponse and again.status == 404
    assert again.css("p::text").get() == "y"
    assert type(r.replace(cls=TextResponse)) is TextResponse


# -- picking them -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content_type", "cls"),
    [
        ("text/html; charset=UTF-8", HtmlResponse),
        ("application/xhtml+xml", HtmlResponse),
        ("TEXT/XML", XmlResponse),
        ("application/rss+xml", XmlResponse),
        ("application/atom+xml; charset=utf-8", XmlResponse),
        ("application/json; charset=utf-8", JsonResponse),
        ("application/x-json", JsonResponse),
        ("text/plain", TextResponse),
        ("text/csv", TextResponse),
        ("application/javascript", TextResponse),
        ("image/png", Response),
        ("application/pdf", Response),
    ],
)
def test_by_content_type(content_type: str, cls: type[Response]) -> None:
    png = b"\x89PNG\r\n\x1a\n"
    assert response_class({"Content-Type": content_type}, "http://e.com/x", png) is cls


def test_a_type_that_says_nothing_leaves_it_to_the_body() -> None:
    """As Scrapy: a binary Content-Type is a plain Response only when the body agrees."""
    headers = {"Content-Type": "application/octet-stream"}
    assert response_class(headers, "http://e.com/x", b"<html><p>x</p>") is HtmlResponse


def test_a_compressed_body_is_bytes() -> None:
    headers = {"Content-Type": "text/html", "Content-Encoding": "gzip"}
    assert response_class(headers, None, None) is Response
    identity = {"Content-Type": "text/html", "Content-Encoding": "identity"}
    assert response_class(identity, None, None) is HtmlResponse


@pytest.mark.parametrize(
    ("headers", "url", "body", "cls"),
    [
        ({"Content-Type": "application/octet-stream"}, "http://e.com/f.xml", b"", XmlResponse),
        (
            {"Content-Disposition": 'attachment; filename="data.txt"'},
            "http://e.com/dl",
            None,
            TextResponse,
        ),
        ({"Content-Disposition": "attachment; filename=d.xml.gz"}, "http://e.com/", None, Response),
        ({"Content-Disposition": "attachment"}, "http://e.com/page.html", None, HtmlResponse),
        ({}, "http://e.com/data.csv", None, TextResponse),
        ({}, "http://e.com/", b"<HTML><body>", HtmlResponse),
        ({}, "http://e.com/", b"<!DOCTYPE html>\n<title>.</title>", HtmlResponse),
        ({}, "http://e.com/", b'<?xml version="1.0"?><r/>', XmlResponse),
        ({}, "http://e.com/", b"plain\ttext\r\nwith a NUL\0", TextResponse),
        ({}, "http://e.com/", b"\x89PNG\r\n\x1a\n", Response),
        (None, None, None, Response),
    ],
)
def test_without_a_telling_content_type_the_name_then_the_body(
    headers: Any, url: Any, body: Any, cls: type[Response]
) -> None:
    assert response_class(headers, url, body) is cls


async def test_the_downloader_gives_each_kind_of_download_its_class(
    serve: Any, make_crawler: Any
) -> None:
    app = web.Application()
    kinds = {
        "/page": (b"<html><body><a href='/x'>x</a></body></html>", "text/html"),
        "/feed": (b"<?xml version='1.0'?><rss><item>i</item></rss>", "application/rss+xml"),
        "/api": (b'{"ok": true}', "application/json"),
        "/notes": (b"just text", "text/plain"),
        "/logo": (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "image/png"),
        "/mystery.html": (b"<p>no type</p>", None),
    }

    async def handle(request: web.Request) -> web.Response:
        body, content_type = kinds[request.path]
        response = web.Response(body=body)
        if content_type is None:
            response.headers.popall("Content-Type", None)
            response.content_type = "application/octet-stream"
        else:
            response.content_type = content_type
        return response

    app.router.add_get("/{name}", handle)
    base = await serve(app)
    ctx = make_crawler()
    async with AiohttpTransport(ctx.settings, ctx.stats) as transport:
        got = {path: type(await transport.fetch(Request(base + path))) for path in kinds}
    assert got == {
        "/page": HtmlResponse,
        "/feed": XmlResponse,
        "/api": JsonResponse,
        "/notes": TextResponse,
        "/logo": Response,
        "/mystery.html": HtmlResponse,  # octet-stream says nothing: the name does
    }


# -- following from them --------------------------------------------------------------------
PAGE = (
    b'<html><body><a href="next.html" class="n">next</a><a href="/abs">abs</a>'
    b'<link rel="next" href="p2"></body></html>'
)


def _page() -> HtmlResponse:
    return HtmlResponse("http://e.com/dir/page", body=PAGE)


def _cb(response: Response) -> None:
    pass


def _eb(failure: Any) -> None:
    pass


OPTIONS: dict[str, Any] = {
    "callback": _cb,
    "errback": _eb,
    "cb_kwargs": {"n": 1},
    "meta": {"m": 2},
    "priority": 3,
    "dont_filter": True,
}


@pytest.mark.parametrize(
    ("target", "url"),
    [
        (Link("next.html"), "http://e.com/dir/next.html"),  # a relative Link
        ("../up", "http://e.com/up"),
        ("a", "http://e.com/dir/next.html"),  # css of an <a>
        ("link", "http://e.com/dir/p2"),
    ],
)
def test_follow_passes_every_request_option(target: Any, url: str) -> None:
    r = _page()
    if target in ("a", "link"):
        target = r.css(target)[0]
    request = r.follow(target, **OPTIONS)
    assert request.url == url
    for name, value in OPTIONS.items():
        assert getattr(request, name) == value, name


def test_follow_all_of_a_selector_list_of_attributes() -> None:
    r = _page()
    requests = list(r.follow_all(r.css("a::attr(href)"), **OPTIONS))
    assert [q.url for q in requests] == ["http://e.com/dir/next.html", "http://e.com/abs"]
    assert all(q.cb_kwargs == {"n": 1} and q.errback is _eb for q in requests)
    assert [q.url for q in r.follow_all(css="a.n", meta={"x": 1})] == [requests[0].url]


def test_follow_of_a_selector_list_says_to_use_follow_all() -> None:
    r = _page()
    with pytest.raises(ValueError, match="use follow_all"):
        r.follow(r.css("a"))  # type: ignore[arg-type]
