"""JsonRequest: data serialized as the JSON body, Scrapy's headers and method rules."""

from __future__ import annotations

import json

import pytest

from skitter.http import JsonRequest

ACCEPT = "application/json, text/javascript, */*; q=0.01"


def test_data_becomes_a_sorted_json_post_with_json_headers() -> None:
    r = JsonRequest("http://e.com/api", data={"b": 1, "a": [1, 2]})
    assert r.method == "POST"
    assert r.body == b'{"a": [1, 2], "b": 1}'
    assert r.headers["Content-Type"] == b"application/json"
    assert r.headers.text("Accept") == ACCEPT


def test_without_data_it_is_a_get_with_the_json_headers() -> None:
    r = JsonRequest("http://e.com/api")
    assert (r.method, r.body, r.headers.text("Accept")) == ("GET", b"", ACCEPT)


def test_empty_data_is_still_data() -> None:
    r = JsonRequest("http://e.com/", data=[])
    assert (r.method, r.body) == ("POST", b"[]")


def test_method_given_wins() -> None:
    assert JsonRequest("http://e.com/", data={"a": 1}, method="PUT").method == "PUT"


def test_body_wins_over_data_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="data will be ignored"):
        r = JsonRequest("http://e.com/", body=b"raw", data={"a": 1})
    assert (r.method, r.body) == ("GET", b"raw")
    with pytest.warns(UserWarning, match="data will be ignored"):
        assert JsonRequest("http://e.com/", body=b"", data={"a": 1}).body == b""


def test_body_none_lets_data_through() -> None:
    assert JsonRequest("http://e.com/", body=None, data={"a": 1}).body == b'{"a": 1}'


def test_dumps_kwargs_are_used_and_copied() -> None:
    kwargs = {"separators": (",", ":"), "ensure_ascii": False}
    r = JsonRequest("http://e.com/", data={"é": 1, "a": 2}, dumps_kwargs=kwargs)
    assert r.body == '{"a":2,"é":1}'.encode()
    assert r.dumps_kwargs == {**kwargs, "sort_keys": True}
    assert kwargs == {"separators": (",", ":"), "ensure_ascii": False}  # not changed
    unsorted = JsonRequest(
        "http://e.com/", data={"b": 1, "a": 2}, dumps_kwargs={"sort_keys": False}
    )
    assert unsorted.body == b'{"b": 1, "a": 2}'


def test_given_headers_are_kept() -> None:
    r = JsonRequest("http://e.com/", data={}, headers={"Content-Type": "application/vnd.x+json"})
    assert r.headers["Content-Type"] == b"application/vnd.x+json"


def test_replace_with_data_reserializes_with_the_same_dumps_kwargs() -> None:
    r = JsonRequest("http://e.com/", data={"a": 1}, dumps_kwargs={"indent": 1})
    again = r.replace(data={"b": 2})
    assert type(again) is JsonRequest
    assert json.loads(again.body) == {"b": 2} and b"\n" in again.body
    assert again.dumps_kwargs == r.dumps_kwargs and again.method == "POST"
    assert r.replace(priority=3).body == r.body
    with pytest.warns(UserWarning, match="data will be ignored"):
        assert r.replace(data={"c": 3}, body=b"x").body == b"x"


def test_copy_keeps_class_headers_and_dumps_kwargs() -> None:
    r = JsonRequest("http://e.com/", data={"a": 1}, dumps_kwargs={"indent": 2})
    c = r.copy()
    assert type(c) is JsonRequest
    assert (c.body, c.method, c.dumps_kwargs) == (r.body, "POST", r.dumps_kwargs)
    assert c.headers["Content-Type"] == b"application/json"
