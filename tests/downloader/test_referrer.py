"""Referrer policies (REFERRER_POLICY, meta["referrer_policy"], the Referrer-Policy header):
each W3C policy on a same-origin, a cross-origin and an https->http downgrade link, the
Referer of redirects, and one crawl whose server sees the header arrive."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiohttp import web

from skitter import ConfigError, Crawler, Request, Response, Spider
from skitter.downloader import RedirectMiddleware
from skitter.http import ReferrerPolicies, ReferrerPolicy
from skitter.http._referrer import UnsafeUrlPolicy
from skitter.settings import Settings
from skitter.spider import RefererMiddleware
from skitter.testing import TestCrawler

PAGE = "https://user:pw@a.example/p?q=1#frag"
FULL = "https://a.example/p?q=1"
ORIGIN = "https://a.example/"
SAME = "https://a.example/other"
CROSS = "https://b.example/x"
DOWNGRADE = "http://a.example/x"

# policy: Referer for (same-origin, cross-origin, downgrade) links found on PAGE.
EXPECTED: dict[str, tuple[str | None, str | None, str | None]] = {
    "no-referrer": (None, None, None),
    "no-referrer-when-downgrade": (FULL, FULL, None),
    "same-origin": (FULL, None, None),
    "origin": (ORIGIN, ORIGIN, ORIGIN),
    "strict-origin": (ORIGIN, ORIGIN, None),
    "origin-when-cross-origin": (FULL, ORIGIN, ORIGIN),
    "strict-origin-when-cross-origin": (FULL, ORIGIN, None),
    "unsafe-url": (FULL, FULL, FULL),
    "scrapy-default": (FULL, FULL, None),
}


def page(url: str = PAGE, **headers: str) -> Response:
    return Response(url, headers=headers, body=b"<html></html>")


async def links(mw: RefererMiddleware, response: Response, *requests: Request) -> list[Any]:
    check = mw.request_filter(response, None)
    assert check is not None
    return [check(request) for request in requests]


def referers(requests: list[Request]) -> tuple[str | None, ...]:
    return tuple(request.headers.text("Referer") for request in requests)


def middleware(**settings: Any) -> RefererMiddleware:
    return RefererMiddleware.from_crawler(TestCrawler(_settings(settings)))


def _settings(settings: dict[str, Any]) -> Settings:
    return Settings(settings)


@pytest.mark.parametrize(("policy", "expected"), EXPECTED.items())
async def test_each_policy_from_the_setting(policy: str, expected: tuple[str | None, ...]) -> None:
    mw = middleware(REFERRER_POLICY=policy)
    out = await links(mw, page(), Request(SAME), Request(CROSS), Request(DOWNGRADE))
    assert referers(out) == expected


@pytest.mark.parametrize(("policy", "expected"), EXPECTED.items())
async def test_each_policy_from_the_response_header(
    policy: str, expected: tuple[str | None, ...]
) -> None:
    mw = middleware(REFERRER_POLICY="no-referrer")
    response = page(**{"Referrer-Policy": f"bogus, {policy}"})  # the last known name wins
    out = await links(mw, response, Request(SAME), Request(CROSS), Request(DOWNGRADE))
    assert referers(out) == expected


@pytest.mark.parametrize(("policy", "expected"), EXPECTED.items())
async def test_each_policy_from_meta(policy: str, expected: tuple[str | None, ...]) -> None:
    mw = middleware(REFERRER_POLICY="no-referrer")
    response = page(**{"Referrer-Policy": "no-referrer"})  # meta outranks the header
    requests = [Request(url, meta={"referrer_policy": policy}) for url in (SAME, CROSS, DOWNGRADE)]
    assert referers(await links(mw, response, *requests)) == expected


async def test_policy_classes_and_scrapy_paths() -> None:
    class Always(ReferrerPolicy):
        def referrer(self, response_url: str, request_url: str) -> str | None:
            return "http://fixed/"

    mw = middleware(REFERRER_POLICY="scrapy.spidermiddlewares.referer.UnsafeUrlPolicy")
    [out] = await links(mw, page(), Request(DOWNGRADE))
    assert out.headers.text("Referer") == FULL
    [out] = await links(mw, page(), Request(DOWNGRADE, meta={"referrer_policy": Always}))
    assert out.headers["Referer"] == b"http://fixed/"
    assert ReferrerPolicies("no-referrer", {"mine": Always}).default.name == "no-referrer"
    assert ReferrerPolicies("mine", {"mine": Always}).default.referrer(PAGE, CROSS) == (
        "http://fixed/"
    )


async def test_unknown_names_fall_back_loudly(caplog: pytest.LogCaptureFixture) -> None:
    mw = middleware(REFERRER_POLICY="origin")
    header = page(**{"Referrer-Policy": "skitter.http.UnsafeUrlPolicy"})  # no paths from servers
    with caplog.at_level(logging.WARNING, logger="skitter.referrer"):
        [a] = await links(mw, header, Request(CROSS))
        [b] = await links(mw, page(), Request(CROSS, meta={"referrer_policy": "nope"}))
    assert a.headers.text("Referer") == ORIGIN
    assert b.headers.text("Referer") == ORIGIN
    assert "Unknown referrer policy 'skitter.http.UnsafeUrlPolicy'" in caplog.text
    assert "Unknown referrer policy 'nope' in meta" in caplog.text
    with pytest.raises(ConfigError, match="REFERRER_POLICY 'nope' is not a referrer policy"):
        middleware(REFERRER_POLICY="nope")
    with pytest.raises(ConfigError, match="cannot load referrer policy"):
        middleware(REFERRER_POLICY="no.such.Policy")
    with pytest.raises(ConfigError, match="REFERRER_POLICY must be a policy name"):
        middleware(REFERRER_POLICY=dict)
    assert middleware(REFERRER_POLICY=UnsafeUrlPolicy).policies.default.name == "unsafe-url"


async def test_an_existing_referer_is_kept_and_the_switch_works() -> None:
    mw = middleware(REFERRER_POLICY="unsafe-url")
    [out] = await links(mw, page(), Request(CROSS, headers={"Referer": "http://mine/"}))
    assert out.headers["Referer"] == b"http://mine/"
    assert ReferrerPolicies.from_settings(_settings({"REFERER_ENABLED": False})) is None


def redirect_of(response_url: str, target: str, **settings: Any) -> Request:
    mw = RedirectMiddleware.from_crawler(TestCrawler(_settings(settings)))
    request = Request(response_url, headers={"Referer": "http://old.example/"})
    result = mw.process_response(request, Response(response_url, 302, {"Location": target}), None)
    assert isinstance(result, Request)
    return result


def test_a_redirect_sends_the_redirecting_page_by_the_policy() -> None:
    # Scrapy's rule: the new request is a link found on the page that redirected.
    assert redirect_of(FULL, SAME).headers.text("Referer") == FULL
    assert "Referer" not in redirect_of(FULL, DOWNGRADE).headers
    assert redirect_of(FULL, CROSS, REFERRER_POLICY="origin").headers.text("Referer") == ORIGIN
    assert "Referer" not in redirect_of(FULL, SAME, REFERER_ENABLED=False).headers


class Linker(Spider):
    name = "linker"
    custom_settings = {"REFERRER_POLICY": "origin", "ROBOTSTXT_OBEY": False}

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/start?x=1")

    def parse(self, response: Response) -> Any:
        yield from response.follow_all(css="a")


async def test_the_referer_arrives_at_the_server(serve: Any) -> None:
    seen: dict[str, str | None] = {}

    async def handle(request: web.Request) -> web.Response:
        seen[request.path] = request.headers.get("Referer")
        html = '<a href="/a">a</a><a href="/b">b</a>' if request.path == "/start" else ""
        headers = {"Referrer-Policy": "unsafe-url"} if request.path == "/a" else {}
        if request.path == "/a":
            html = '<a href="/c?y=2">c</a>'
        return web.Response(text=f"<html>{html}</html>", content_type="text/html", headers=headers)

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    base = await serve(app)
    await Crawler(Linker, {"BASE": base, "LOG_LEVEL": "WARNING"}).run()
    assert seen == {
        "/start": None,
        "/a": f"{base}/",  # REFERRER_POLICY = origin
        "/b": f"{base}/",
        "/c": f"{base}/a",  # /a's own Referrer-Policy: unsafe-url
    }


def test_referrer_policies_setting_adds_and_removes_names() -> None:
    policies = ReferrerPolicies(
        "scrapy-default", {"mine": "skitter.http._referrer.OriginPolicy", "unsafe-url": None}
    )
    assert policies.for_response(page(**{"Referrer-Policy": "mine"})).name == "origin"
    # A name removed is unknown: the crawl's policy applies.
    assert policies.for_response(page(**{"Referrer-Policy": "unsafe-url"})) is policies.default
    with pytest.raises(ConfigError, match="not a ReferrerPolicy subclass"):
        ReferrerPolicies(extra={"bad": "skitter.http.Request"})
