"""``link_request``: the cheap build of a followed link's Request is the constructor's."""

from __future__ import annotations

from typing import Any

import pytest

from skitter.exceptions import InvalidURL
from skitter.http import HtmlResponse, Request
from skitter.http._link_request import link_request


def _callback(response: Any) -> None:
    """A callback to carry."""


def _state(request: Request) -> dict[str, Any]:
    """Every slot of ``request`` (a slot left unset shows as missing)."""
    return {name: getattr(request, name, "<unset>") for name in Request.__slots__}


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/a/b.html",
        "https://example.com/?q=1&r=2#top",
        "http://127.0.0.1:8080/p",
        "ftp://example.com/file",
        "http://example.com/a\tb",  # kept as it is by both
        "http://example.com/with space",  # escaped: the constructor's path
        'http://example.com/"quoted"',
        "http://example.com/<x>",
        "http://example.com/caf\u00e9",
        "http://example.com/trailing ",
        " http://example.com/leading",
        "http://example.com/\n",
    ],
)
@pytest.mark.parametrize("callback", [None, _callback])
def test_a_link_request_is_the_constructors_request(url: str, callback: Any) -> None:
    fast, full = link_request(url, callback), Request(url, callback)
    assert type(fast) is Request
    assert _state(fast) == _state(full)
    assert fast.meta is not full.meta  # each its own dict


@pytest.mark.parametrize("url", ["example.com/x", "/relative", ":nothing", "1http://x/"])
def test_a_link_without_a_scheme_is_refused_as_the_constructor_refuses_it(url: str) -> None:
    with pytest.raises(InvalidURL, match="Missing scheme"):
        link_request(url, None)


def test_a_callback_that_cannot_be_called_is_refused_as_the_constructor_refuses_it() -> None:
    with pytest.raises(TypeError, match="callback must be a callable"):
        link_request("http://example.com/", "parse")  # type: ignore[arg-type]


def test_follow_and_follow_all_give_the_constructors_request() -> None:
    body = b'<a href="/a">a</a><a href="http://other.example/b?x=1">b</a><a href="c d">c</a>'
    response = HtmlResponse("http://example.com/dir/page", body=body)
    hrefs = response.css("a::attr(href)").getall()
    for followed, href in zip(response.follow_all(hrefs, _callback), hrefs, strict=True):
        single = response.follow(href, _callback)
        expected = Request(response.urljoin(href), _callback)
        assert _state(followed) == _state(single) == _state(expected)
