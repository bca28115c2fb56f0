"""Link objects, as link extractors hand them out, are followed like URLs."""

from __future__ import annotations

import pytest

from skitter.http import Link, Request, Response


def _page() -> Response:
    return Response("http://127.0.0.1/a/", body=b"<html><body></body></html>")


def test_follow_takes_a_link_and_its_request_options() -> None:
    link = Link("http://127.0.0.1/b", text="next")
    request = _page().follow(link, cb_kwargs={"n": 1}, meta={"m": 2})
    assert isinstance(request, Request)
    assert (request.url, request.cb_kwargs, request.meta["m"]) == (
        "http://127.0.0.1/b",
        {"n": 1},
        2,
    )


def test_follow_all_takes_links() -> None:
    links = [Link("http://127.0.0.1/b"), Link("mailto:x@example.com"), Link("/c")]
    urls = [r.url for r in _page().follow_all(links)]
    assert urls == ["http://127.0.0.1/b", "http://127.0.0.1/c"]


def test_a_link_needs_a_string_url() -> None:
    with pytest.raises(TypeError, match="str"):
        Link(b"http://127.0.0.1/")  # type: ignore[arg-type]
