"""Request construction, copies and taskids."""

from __future__ import annotations

import pytest

from skitter import Request
from skitter.exceptions import InvalidURL
from skitter.http import Headers


def test_defaults_match_scrapy_and_spec() -> None:
    r = Request("http://example.com/")
    assert (r.method, r.priority, r.dont_filter, r.meta, r.cb_kwargs) == ("GET", 0, False, {}, {})
    assert (r.exetime, r.retries, r.age, r.auto_recrawl, r.itag) == (0.0, None, -1, False, None)
    assert not r.has_headers and r.body == b""


@pytest.mark.parametrize("url", ["example.com/x", "/relative", "", ":nothing"])
def test_missing_scheme_is_a_clear_error(url: str) -> None:
    with pytest.raises(InvalidURL, match="Missing scheme"):
        Request(url)


def test_url_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="str"):
        Request(b"http://example.com")  # type: ignore[arg-type]


def test_str_body_is_encoded_and_headers_are_case_insensitive() -> None:
    r = Request("http://e.com", method="post", body="café", headers={"X-A": "1"})
    assert r.method == "POST"
    assert r.body == "café".encode()
    assert r.headers["x-a"] == b"1"


def test_taskid_is_fingerprint_hex_unless_given() -> None:
    a = Request("http://e.com/a?y=1&x=2")
    b = Request("http://E.com/a?x=2&y=1#frag")
    assert a.taskid == b.taskid == a.fingerprint.hex()
    assert not a.has_explicit_taskid
    c = Request("http://e.com/a", taskid="mine")
    assert c.taskid == "mine" and c.has_explicit_taskid


def test_invalid_url_fails_at_fingerprint_time_with_the_request() -> None:
    r = Request("http://[::1/x")
    with pytest.raises(InvalidURL) as info:
        _ = r.fingerprint
    assert info.value.request is r


def test_replace_copies_and_changes() -> None:
    r = Request("http://e.com/a", meta={"k": 1}, priority=3, taskid="t1", headers={"A": "b"})
    same = r.replace(priority=5)
    assert same.taskid == "t1" and same.priority == 5 and same.meta == {"k": 1}
    assert same.meta is not r.meta and same.headers is not r.headers
    moved = r.replace(url="http://e.com/b")
    assert moved.taskid != "t1"
    assert moved.url == "http://e.com/b"


def test_a_referer_set_by_default_builds_no_headers_until_they_are_read() -> None:
    """The Referer every followed link gets is kept as the page's string: a queued
    request carries no header dict of its own (issue 18), and reads the same."""
    request = Request("http://h.com/a")
    request.setdefault_referer("http://h.com/page")
    assert request._headers is None and request.has_headers
    copy = request.replace(priority=3)
    assert request.to_dict()["headers"] == {b"Referer": [b"http://h.com/page"]}
    assert request.headers["Referer"] == b"http://h.com/page"
    assert copy.headers.text_list("Referer") == ["http://h.com/page"]
    request.setdefault_referer("http://h.com/other")  # a default: the first one stays
    assert request.headers.text_list("Referer") == ["http://h.com/page"]


def test_a_default_referer_never_replaces_one_given() -> None:
    given = Request("http://h.com/a", headers={"referer": "http://h.com/mine"})
    given.setdefault_referer("http://h.com/page")
    assert given.headers.text_list("Referer") == ["http://h.com/mine"]
    later = Request("http://h.com/a")
    later.headers["X-Other"] = "1"  # headers already built: the dict takes it
    later.setdefault_referer("http://h.com/page")
    assert later.headers["Referer"] == b"http://h.com/page"


def test_cb_kwargs_are_made_on_first_use_and_kept() -> None:
    request = Request("http://h.com/a")
    assert request._cb_kwargs is None  # nothing allocated for a request without any
    request.cb_kwargs["page"] = 2
    assert request.cb_kwargs == {"page": 2}
    assert request.replace().cb_kwargs == {"page": 2}
    given = {"x": 1}
    assert Request("http://h.com/a", cb_kwargs=given).cb_kwargs is given
    request.cb_kwargs = {"y": 3}
    assert request.to_dict()["cb_kwargs"] == {"y": 3}


def test_the_url_is_escaped_as_scrapy_escapes_it_unless_verbatim() -> None:
    assert Request("http://e.com/a b").url == "http://e.com/a%20b"
    assert Request("http://e.com/£?u=µ").url == "http://e.com/%C2%A3?u=%C2%B5"
    assert Request("http://e.com/µ?c=£", encoding="latin1").url == "http://e.com/%C2%B5?c=%A3"
    assert Request("http://e.com/r%E9sum%E9").url == "http://e.com/r%E9sum%E9"  # kept
    verbatim = Request("http://e.com/a b", meta={"verbatim_url": True})
    assert verbatim.url == "http://e.com/a b"


def test_wrong_argument_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="priority not an integer"):
        Request("http://e.com/", priority="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callback must be a callable"):
        Request("http://e.com/", callback="parse")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="errback must be a callable"):
        Request("http://e.com/", errback="oops")  # type: ignore[arg-type]
    with pytest.raises(InvalidURL, match="Missing scheme"):
        Request("/foo:bar")


def test_headers_set_as_a_headers_object_are_that_object() -> None:
    request = Request("http://e.com/")
    headers = Headers({b"X-Test": b"1"})
    request.headers = headers
    assert request.headers is headers
    request.headers = {b"A": b"b"}
    assert isinstance(request.headers, Headers) and request.headers[b"A"] == b"b"
