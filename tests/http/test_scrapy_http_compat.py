"""Scrapy's http-layer behaviours that Scrapy code relies on: Headers with bytes values,
responses without a request, request flags, curl in and out."""

from __future__ import annotations

import pytest

from skitter.exceptions import InvalidURL
from skitter.http import Headers, HtmlResponse, Request, Response, XmlRpcRequest
from skitter.utils.curl import curl_to_request_kwargs
from skitter.utils.request import request_to_curl


def test_headers_hold_bytes_under_any_case_of_the_name() -> None:
    h = Headers({"content-type": "text/html", "X-Num": 5})
    h.appendlist("Set-Cookie", "a=1")
    h.appendlist("set-cookie", b"b=2")
    assert h.get("Content-Type") == b"text/html"
    assert h[b"CONTENT-TYPE"] == b"text/html"
    assert h.getlist("Set-Cookie") == [b"a=1", b"b=2"]
    assert h["Set-Cookie"] == b"b=2"
    assert h.getlist("x-num") == [b"5"]
    assert sorted(h) == [b"Content-Type", b"Set-Cookie", b"X-Num"]
    assert h.get("Accept", "*/*") == b"*/*"
    assert h.getlist("Accept") == []


def test_headers_refuse_what_cannot_go_on_the_wire() -> None:
    with pytest.raises(TypeError, match="Unsupported value type"):
        Headers({"X": object()})
    h = Headers({"X": "1"})
    h["X"] = None
    assert h["X"] is None and h.getlist("X") == []


def test_a_request_takes_scrapy_headers_and_bytes() -> None:
    headers = Headers({"Accept": ["a", "b"]})
    request = Request("http://e.com/", headers=headers)
    assert request.headers.getlist("Accept") == [b"a", b"b"]
    assert request.headers.getlist("Accept") is not headers.getlist("Accept")  # a copy
    request = Request("http://e.com/", headers={b"X-Key": b"v", "Y": None})
    assert dict(request.headers) == {b"X-Key": [b"v"], b"Y": []}


def test_a_response_takes_scrapy_headers_and_bytes() -> None:
    response = Response("http://e.com/", headers={b"Set-Cookie": [b"a=1", b"b=2"]})
    assert response.headers.getlist("set-cookie") == [b"a=1", b"b=2"]
    assert response.headers.get("Set-Cookie") == b"b=2"  # the last, as Scrapy's
    assert dict(Response("http://e.com/", headers=Headers({"X": 1})).headers) == {b"X": [b"1"]}


def test_a_response_made_without_a_request_has_none_and_builds_from_any_url() -> None:
    response = HtmlResponse(url="", body=b"<a href='x'>x</a>")
    assert response.request is None
    assert response.css("a::attr(href)").get() == "x"
    with pytest.raises(AttributeError, match="not tied to any request"):
        _ = response.meta
    relative = Response("relative/path")
    assert relative.url == "relative/path"


def test_invalid_url_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Missing scheme"):
        Request("no-scheme")
    assert issubclass(InvalidURL, ValueError)


def test_flags_are_kept_through_replace_and_to_dict() -> None:
    request = Request("http://e.com/", flags=["cached"])
    assert request.replace(url="http://e.com/2").flags == ["cached"]
    assert request.to_dict()["flags"] == ["cached"]
    assert Request("http://e.com/").flags == []


def test_curl_in_and_out() -> None:
    kwargs = curl_to_request_kwargs(
        "curl 'http://e.com/p' -X PUT -H 'Accept: text/html' -H 'Cookie: a=1' -d x=1 -d y=2"
    )
    assert kwargs == {
        "method": "PUT",
        "url": "http://e.com/p",
        "headers": [("Accept", "text/html")],
        "cookies": {"a": "1"},
        "body": "x=1&y=2",
    }
    request = Request.from_curl("curl e.com -d 'q=1'", priority=3)
    assert (request.method, request.url, request.body, request.priority) == (
        "POST",
        "http://e.com",
        b"q=1",
        3,
    )
    assert request_to_curl(request) == "curl -X POST http://e.com --data-raw 'q=1'"
    with pytest.raises(ValueError, match="Unrecognized options: --nope"):
        curl_to_request_kwargs("curl --nope http://e.com", ignore_unknown_options=False)


def test_xml_rpc_request_posts_the_call() -> None:
    request = XmlRpcRequest("http://e.com/rpc", params=(1,), methodname="sum")
    assert request.method == "POST" and request.dont_filter
    assert request.headers["Content-Type"] == b"text/xml"
    assert b"<methodName>sum</methodName>" in request.body


def test_json_in_another_encoding_and_scrapys_errors() -> None:
    body = '{"message": "café"}'.encode("latin-1")
    response = Response(
        "http://e.com/", headers={"Content-Type": "application/json; charset=latin-1"}, body=body
    )
    assert response.json() == {"message": "café"}
    with pytest.raises(ValueError, match="Expecting value"):
        Response("http://e.com/", body=b"<html>").json()
    with pytest.raises(ValueError, match="url can't be None"):
        Response("http://e.com/").follow(None)  # type: ignore[arg-type]
