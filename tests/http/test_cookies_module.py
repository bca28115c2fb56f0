"""``skitter.http.cookies`` (Scrapy's ``scrapy.http.cookies``): a standard-library jar
fed skitter's Requests and Responses, as cookie plug-ins use it."""

from __future__ import annotations

from skitter.http import Request, Response
from skitter.http.cookies import CookieJar, WrappedRequest, WrappedResponse
from skitter.utils.request import _to_verbose_cookies


def test_a_cookie_set_by_a_response_goes_back_to_its_site_only() -> None:
    jar = CookieJar(check_expired_frequency=2)
    page = Request("http://shop.example/login")
    response = Response(
        "http://shop.example/login",
        headers={"Set-Cookie": ["sid=abc; Path=/", "theme=dark; Path=/"]},
        request=page,
    )
    jar.extract_cookies(response, page)
    assert sorted(c.name for c in jar) == ["sid", "theme"]
    assert "shop.example" in jar._cookies

    same_site = Request("http://shop.example/cart")
    jar.add_cookie_header(same_site)
    assert same_site.headers.get("Cookie") in (b"sid=abc; theme=dark", b"theme=dark; sid=abc")
    elsewhere = Request("http://other.example/")
    jar.add_cookie_header(elsewhere)
    assert "Cookie" not in elsewhere.headers
    assert jar.processed == 2
    jar.clear()
    assert len(jar) == 0


def test_wrappers_speak_urllib() -> None:
    request = Request("https://a.example:8443/p?q=1", headers={"X-A": ["1", "2"]})
    wrapped = WrappedRequest(request)
    assert (wrapped.host, wrapped.type, wrapped.origin_req_host) == (
        "a.example:8443",
        "https",
        "a.example",
    )
    assert wrapped.header_items() == [("X-A", ["1", "2"])]
    assert not wrapped.unverifiable
    request.meta["is_unverifiable"] = True
    assert wrapped.unverifiable
    wrapped_response = WrappedResponse(Response("https://a.example/", headers={"A": "é"}))
    assert wrapped_response.info().get_all("a") == ["é"]
    assert wrapped_response.get_all("missing", "none") == "none"


def test_to_verbose_cookies() -> None:
    assert _to_verbose_cookies({"a": "1"}) == [{"name": "a", "value": "1"}]
    listed = [{"name": "b", "value": "2", "path": "/"}]
    assert _to_verbose_cookies(listed) is listed  # type: ignore[arg-type]
