"""Request construction, copies and taskids."""

from __future__ import annotations

import pytest

from skitter import Request
from skitter.exceptions import InvalidURL


def test_defaults_match_scrapy_and_spec() -> None:
    r = Request("http://example.com/")
    assert (r.method, r.priority, r.dont_filter, r.meta, r.cb_kwargs) == ("GET", 0, False, {}, {})
    assert (r.exetime, r.retries, r.age, r.auto_recrawl, r.itag) == (0.0, None, -1, False, None)
    assert not r.has_headers and r.body == b""


@pytest.mark.parametrize("url", ["example.com/x", "/relative", "", ":nothing"])
def test_missing_scheme_is_a_clear_error(url: str) -> None:
    with pytest.raises(InvalidURL, match="missing scheme"):
        Request(url)


def test_url_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="str"):
        Request(b"http://example.com")  # type: ignore[arg-type]


def test_str_body_is_encoded_and_headers_are_case_insensitive() -> None:
    r = Request("http://e.com", method="post", body="café", headers={"X-A": "1"})
    assert r.method == "POST"
    assert r.body == "café".encode()
    assert r.headers["x-a"] == "1"


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
