"""HTTP Basic auth (issue 16): HttpAuthMiddleware sends credentials to its domain only
(host and port, as Scrapy matches them: issue 27), and RedirectMiddleware drops
credential headers when a redirect changes origin."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest
from aiohttp import web
from multidict import CIMultiDict
from w3lib.http import basic_auth_header

from skitter import Crawler, Request, Spider
from skitter.downloader import HttpAuthMiddleware, RedirectMiddleware
from skitter.exceptions import ConfigError, RequestError, ScrapyDeprecationWarning
from skitter.http import Response
from skitter.settings import Settings
from skitter.testing import TestCrawler

from ..conftest import MakeDownloader, MemoryStats

PASSWORD = "s3cret-pa55word"
BASIC = basic_auth_header("crawler", PASSWORD).decode()


def middleware(spider: Any = None, **settings: Any) -> HttpAuthMiddleware:
    return HttpAuthMiddleware.from_crawler(TestCrawler(Settings(settings), spider=spider))


def auth_of(mw: HttpAuthMiddleware, url: str, **kwargs: Any) -> str | None:
    request = Request(url, **kwargs)
    mw.process_request(request, None)
    return request.headers.text("Authorization") if request.has_headers else None


# -- which requests get credentials ----------------------------------------------------------
def test_credentials_go_to_the_domain_and_its_subdomains_only() -> None:
    mw = middleware(HTTPAUTH_USER="crawler", HTTPAUTH_PASS=PASSWORD, HTTPAUTH_DOMAIN="example.com")
    assert auth_of(mw, "https://example.com/") == BASIC
    assert auth_of(mw, "http://example.com/x") == BASIC
    assert auth_of(mw, "http://example.com:80/x") == BASIC  # the default port, written out
    assert auth_of(mw, "https://deep.sub.EXAMPLE.com/") == BASIC
    assert auth_of(mw, "https://other.com/") is None
    assert auth_of(mw, "https://notexample.com/") is None
    assert auth_of(mw, "https://example.com.evil.net/") is None
    assert auth_of(mw, "https://user@evil.net/?example.com") is None


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com:8080/x",
        "https://example.com:8443/",
        "https://example.com:80/",  # port 80 is not https's
        "http://sub.example.com:8080/",
        "http://example.com:443/",
    ],
)
def test_a_domain_without_a_port_is_the_default_port_only_as_scrapy_matches_it(url: str) -> None:
    """Scrapy compares the URL's host[:port] with the domain: another port of the same
    host is another server, and gets no credentials."""
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="example.com")
    assert auth_of(mw, url) is None
    spider = middleware(Intranet())
    assert auth_of(spider, url.replace("example.com", "intranet.example.com")) is None
    assert auth_of(spider, "https://intranet.example.com/") is not None


def test_a_domain_with_a_port_is_that_port_only_and_an_ip_has_no_subdomains() -> None:
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="example.com:8443")
    assert auth_of(mw, "https://api.example.com:8443/") is not None
    assert auth_of(mw, "https://example.com/") is None
    ip = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="10.0.0.1")
    assert auth_of(ip, "http://10.0.0.1/") is not None
    assert auth_of(ip, "http://10.0.0.1:81/") is None
    assert auth_of(ip, "http://x.10.0.0.1/") is None
    ip_port = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="10.0.0.1:81")
    assert auth_of(ip_port, "http://10.0.0.1:81/") is not None


def test_none_sends_them_everywhere_but_only_when_asked_for() -> None:
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN=None)
    assert auth_of(mw, "https://anywhere.org/") == basic_auth_header("u", "p").decode()
    with pytest.raises(ConfigError, match="HTTPAUTH_DOMAIN is not"):
        middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p")


def test_without_credentials_it_sends_none_and_still_refuses_meta_credentials() -> None:
    # It stays in the chain (Scrapy's does too): were it left out, meta["http_user"]
    # would go unsent without a word.
    for mw in (middleware(), middleware(HTTPAUTH_DOMAIN="example.com"), HttpAuthMiddleware()):
        assert auth_of(mw, "https://example.com/") is None
        with pytest.raises(RequestError, match=r"meta\['http_user'\]"):
            auth_of(mw, "https://example.com/", meta={"http_user": "a", "http_pass": "b"})


def test_scrapys_spider_opened_takes_the_spiders_credentials() -> None:
    class Spider:
        http_user, http_pass, http_auth_domain = "u", "p", "example.com"

    mw = HttpAuthMiddleware()
    with pytest.warns(ScrapyDeprecationWarning):
        mw.spider_opened(Spider())
    assert auth_of(mw, "https://example.com/") == basic_auth_header("u", "p").decode()
    assert auth_of(mw, "https://other.com/") is None
    del Spider.http_auth_domain
    with pytest.warns(ScrapyDeprecationWarning), pytest.raises(AttributeError):
        HttpAuthMiddleware().spider_opened(Spider())


def test_an_authorization_header_of_the_request_wins() -> None:
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="example.com")
    assert auth_of(mw, "https://example.com/", headers={"Authorization": "Bearer t"}) == "Bearer t"


class Intranet(Spider):
    name = "intranet"
    http_user = "spider-user"
    http_pass = PASSWORD
    http_auth_domain = "intranet.example.com"


class Legacy(Spider):
    name = "legacy"
    http_user = "spider-user"
    http_pass = PASSWORD


def test_the_spiders_attributes_win_and_must_name_their_domain() -> None:
    mw = middleware(Intranet(), HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="example.com")
    assert auth_of(mw, "https://intranet.example.com/") == (
        basic_auth_header("spider-user", PASSWORD).decode()
    )
    assert auth_of(mw, "https://www.example.com/") is None
    with pytest.raises(ConfigError, match="not http_auth_domain"):
        middleware(Legacy())


@pytest.mark.parametrize("domain", ["", "https://example.com/login", "*.example.com", "a b"])
def test_an_unusable_domain_is_refused(domain: str) -> None:
    with pytest.raises(ConfigError, match="HTTPAUTH_DOMAIN"):
        middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN=domain)


def test_meta_credentials_are_refused_not_ignored() -> None:
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS="p", HTTPAUTH_DOMAIN="example.com")
    with pytest.raises(RequestError, match=r"meta\['http_user'\]"):
        auth_of(mw, "https://example.com/", meta={"http_user": "a", "http_pass": "b"})


def test_the_password_is_never_shown() -> None:
    settings = Settings({"HTTPAUTH_USER": "u", "HTTPAUTH_PASS": PASSWORD})
    assert PASSWORD not in repr(settings)
    mw = middleware(HTTPAUTH_USER="u", HTTPAUTH_PASS=PASSWORD, HTTPAUTH_DOMAIN="example.com")
    assert PASSWORD not in repr(mw) and "example.com" in repr(mw)
    with pytest.raises(ConfigError) as caught:
        Settings({"HTTPAUTH_PASS": 42})  # a wrong type quotes the value: masked
    assert "42" not in str(caught.value)


# -- redirects drop credentials when the origin changes ---------------------------------------
def redirected(source: str, target: str, status: int = 302, **headers: str) -> CIMultiDict[str]:
    request = Request(source, headers=headers)
    response = Response(source, status, {"Location": target}, b"", request)
    mw = RedirectMiddleware(MemoryStats())
    result = mw.process_response(request, response, None)
    assert isinstance(result, Request)
    return result.headers


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        ("https://example.com/next", True),
        ("https://example.com:443/next", True),  # the default port is the same origin
        ("http://example.com/next", False),  # scheme
        ("https://example.com:8443/next", False),  # port
        ("https://api.example.com/next", False),  # host
        ("https://other.org/next", False),
    ],
)
def test_authorization_is_dropped_when_the_origin_changes(target: str, kept: bool) -> None:
    headers = redirected("https://example.com/start", target, Authorization=BASIC)
    assert ("Authorization" in headers) is kept


@pytest.mark.parametrize(
    ("source", "target", "kept"),
    [
        ("https://example.com/", "https://example.com:8443/", True),  # same host
        ("http://example.com/", "https://example.com/", True),  # upgrade
        ("https://example.com/", "http://example.com/", False),  # downgrade
        ("https://example.com/", "https://www.example.com/", False),  # host
    ],
)
def test_cookie_is_dropped_on_another_host_or_a_downgrade(
    source: str, target: str, kept: bool
) -> None:
    assert ("Cookie" in redirected(source, target, Cookie="session=1")) is kept


def test_an_environment_proxy_goes_with_its_credentials_when_the_scheme_changes() -> None:
    request = Request(
        "http://example.com/",
        headers={"Proxy-Authorization": "Basic eA=="},
        meta={"proxy": "http://proxy:3128", "_scheme_proxy": True},
    )
    response = Response(request.url, 301, {"Location": "https://example.com/"}, b"", request)
    result = RedirectMiddleware(MemoryStats()).process_response(request, response, None)
    assert isinstance(result, Request)
    assert "proxy" not in result.meta and "Proxy-Authorization" not in result.headers


# -- end to end -----------------------------------------------------------------------------------
def protected(seen: list[tuple[str, str, str | None]]) -> Any:
    async def handler(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization")
        seen.append((request.url.host or "", request.path, auth))
        if auth != BASIC:
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="x"'})
        port = request.url.port
        links = f'<a href="http://localhost:{port}/elsewhere">out</a><a href="/inner">in</a>'
        return web.Response(text=f"<html><body>{links}</body></html>", content_type="text/html")

    return handler


async def test_a_crawl_sends_credentials_to_its_domain_only(
    host_site: Any, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[tuple[str, str, str | None]] = []
    handler = protected(seen)
    site, port = await host_site(
        {"/": handler, "/inner": handler, "/elsewhere": handler, "/away": (302, "")}
    )
    site.pages["/away"] = (302, f"http://localhost:{port}/elsewhere")

    class Protected(Spider):
        name = "protected"
        start_urls = (f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/away")
        custom_settings = {
            "HTTPAUTH_USER": "crawler",
            "HTTPAUTH_PASS": PASSWORD,
            "HTTPAUTH_DOMAIN": f"127.0.0.1:{port}",
        }

        def parse(self, response: Any) -> Any:
            yield {"url": response.url, "status": response.status}
            yield from response.follow_all(css="a")

    with caplog.at_level(logging.DEBUG):
        stats = await Crawler(Protected, {"HTTPERROR_ALLOW_ALL": True}).run()
    by_host = {(host, path): auth for host, path, auth in seen}
    assert by_host[("127.0.0.1", "/")] == BASIC
    assert by_host[("127.0.0.1", "/inner")] == BASIC
    assert by_host[("localhost", "/elsewhere")] is None  # a link to another host
    assert site.hits[("127.0.0.1", "/away")] == 1  # and a redirect to it: both without
    assert all(auth is None for host, _, auth in seen if host == "localhost")
    assert stats["item_scraped_count"] >= 3
    secret = base64.b64encode(f"crawler:{PASSWORD}".encode()).decode()
    assert PASSWORD not in caplog.text and secret not in caplog.text


async def test_downloader_has_the_middleware_at_scrapys_order(
    make_downloader: MakeDownloader,
) -> None:
    settings = {"HTTPAUTH_USER": "u", "HTTPAUTH_PASS": "p", "HTTPAUTH_DOMAIN": "127.0.0.1:8080"}
    downloader = await make_downloader(settings)
    assert downloader.middleware(HttpAuthMiddleware) is not None


class Loopback:
    """Every ``*.test`` name is 127.0.0.1 (DNS_RESOLVER), so hosts differ by name only."""

    async def resolve(self, host: str) -> list[str]:
        if not host.endswith(".test"):
            raise OSError(f"{host} is not a test name")
        return ["127.0.0.1"]


async def test_subdomains_get_credentials_and_other_domains_do_not(serve: Any) -> None:
    seen: list[tuple[str, str | None]] = []

    async def page(request: web.Request) -> web.Response:
        seen.append((request.url.host or "", request.headers.get("Authorization")))
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    port = (await serve(app)).rsplit(":", 1)[1]
    hosts = ("shop.test", "www.shop.test", "api.eu.shop.test", "shop.test.evil.test", "x.test")

    class Shop(Spider):
        name = "shop"
        start_urls = tuple(f"http://{host}:{port}/" for host in hosts)
        http_user, http_pass, http_auth_domain = "crawler", PASSWORD, f"shop.test:{port}"

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    stats = await Crawler(Shop, {"DNS_RESOLVER": Loopback}).run()
    assert stats["item_scraped_count"] == len(hosts)
    assert dict(seen) == {
        "shop.test": BASIC,
        "www.shop.test": BASIC,
        "api.eu.shop.test": BASIC,
        "shop.test.evil.test": None,
        "x.test": None,
    }


async def test_a_redirect_to_another_port_of_the_domain_gets_no_credentials(serve: Any) -> None:
    """Issue 27: with ``http_auth_domain = "auth.test"``, neither a server of that host
    on another port nor a redirect to one gets the credentials; with the port named,
    that port does and a redirect to another port does not."""
    seen: list[tuple[int | None, str, str | None]] = []
    ports: dict[str, int] = {}

    async def page(request: web.Request) -> web.Response:
        seen.append((request.url.port, request.path, request.headers.get("Authorization")))
        if request.path == "/moved":
            raise web.HTTPFound(f"http://auth.test:{ports['other']}/landed")
        return web.Response(text="<html>ok</html>", content_type="text/html")

    for name in ("main", "other"):
        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        ports[name] = int((await serve(app)).rsplit(":", 1)[1])
    main, other = ports["main"], ports["other"]

    def spider(domain: str) -> type[Spider]:
        class Auth(Spider):
            name = "auth"
            start_urls = (f"http://auth.test:{main}/", f"http://auth.test:{main}/moved")
            http_user, http_pass, http_auth_domain = "crawler", PASSWORD, domain

            def parse(self, response: Any) -> Any:
                yield {"url": response.url}

        return Auth

    stats = await Crawler(spider("auth.test"), {"DNS_RESOLVER": Loopback}).run()
    assert stats["item_scraped_count"] == 2
    assert sorted(seen) == sorted(
        [(main, "/", None), (main, "/moved", None), (other, "/landed", None)]
    )
    seen.clear()
    stats = await Crawler(spider(f"auth.test:{main}"), {"DNS_RESOLVER": Loopback}).run()
    assert stats["item_scraped_count"] == 2
    assert sorted(seen) == sorted(
        [(main, "/", BASIC), (main, "/moved", BASIC), (other, "/landed", None)]
    )
