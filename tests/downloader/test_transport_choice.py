"""The optional transports against real local servers: HTTP/2 through httpx (hypercorn
over TLS), curl's browser TLS fingerprint (a relay reads each ClientHello), and the
Downloader's choice of transport (DOWNLOAD_TRANSPORT, ``meta["transport"]``)."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.downloader import Downloader
from skitter.exceptions import (
    ConfigError,
    ConnectError,
    ConnectionLost,
    DNSLookupError,
    DownloadTimeout,
    IgnoreRequest,
    TLSCertificateError,
)

from .conftest import HTTP_TRANSPORTS, MakeDownloader, MakeTransport, make_context
from .test_dns import LOOKUPS, MapResolver
from .tls_servers import Hello, h2_server, relay

# Chrome's cipher suites, in its order, GREASE left out (the list of every Chrome since
# 2020, as JA3 databases record it).
CHROME_CIPHERS = (4865, 4866, 4867, 49195, 49199, 49196, 49200, 52393, 52392)
CHROME_CIPHERS += (49171, 49172, 156, 157, 47, 53)

HITS: dict[str, int] = {}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The site: ``/`` says the HTTP version; ``/login`` sets a cookie and redirects to
    ``/home``, which shows the cookie it got; ``/flaky`` fails once, then answers."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    path, status = scope["path"], 200
    headers = [(b"content-type", b"text/html")]
    body = f"<p>{scope['http_version']}</p>".encode()
    if path == "/login":
        status = 302
        headers += [(b"location", b"/home"), (b"set-cookie", b"session=abc; Path=/")]
    elif path == "/home":
        body = b"<p>" + dict(scope["headers"]).get(b"cookie", b"none") + b"</p>"
    elif path == "/flaky":
        HITS[path] = HITS.get(path, 0) + 1
        status = 503 if HITS[path] == 1 else 200
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
async def h2(tmp_path: Path, ca: trustme.CA) -> AsyncIterator[int]:
    HITS.clear()
    async with h2_server(app, tmp_path, ca) as port:
        yield port


# -- HTTP/2 ----------------------------------------------------------------------------------


async def test_httpx_speaks_http2_where_aiohttp_speaks_http11(
    h2: int, make_transport: MakeTransport
) -> None:
    url = f"https://127.0.0.1:{h2}/"
    httpx, stats = await make_transport(None, "httpx")
    response = await httpx.fetch(Request(url))
    assert (response.status, response.protocol, response.body) == (200, "HTTP/2", b"<p>2</p>")
    assert response.ip_address == "127.0.0.1"
    assert stats.values["downloader/response_status_count/200"] == 1
    aiohttp, _ = await make_transport()
    response = await aiohttp.fetch(Request(url))
    assert (response.protocol, response.body) == ("HTTP/1.1", b"<p>1.1</p>")


async def test_curl_speaks_http2_too(h2: int, make_transport: MakeTransport) -> None:
    curl, _ = await make_transport(None, "curl")
    response = await curl.fetch(Request(f"https://127.0.0.1:{h2}/"))
    assert (response.protocol, response.body) == ("HTTP/2", b"<p>2</p>")


# -- browser fingerprints --------------------------------------------------------------------


async def test_curls_client_hello_is_the_profiles_not_aiohttps(
    h2: int, make_transport: MakeTransport
) -> None:
    async with relay(h2) as seen:
        url = f"https://127.0.0.1:{seen.port}/"
        aiohttp, _ = await make_transport()
        await aiohttp.fetch(Request(url))
        curl, _ = await make_transport(None, "curl")  # DOWNLOAD_IMPERSONATE: chrome
        assert (await curl.fetch(Request(url))).status == 200
        other, _ = await make_transport(None, "curl")
        await other.fetch(Request(url))  # chrome again, on a connection of its own
        firefox, _ = await make_transport({"DOWNLOAD_IMPERSONATE": "firefox"}, "curl")
        await firefox.fetch(Request(url))
    assert len(seen.hellos) == 4
    plain, chrome, chrome_again, fox = seen.hellos
    assert not plain.greased and chrome.greased  # Chrome sends GREASE, OpenSSL does not
    assert plain.ja3 != chrome.ja3
    assert chrome.ciphers == CHROME_CIPHERS
    assert chrome.stable == chrome_again.stable  # the same profile, the same fingerprint
    assert fox.ciphers != chrome.ciphers and fox.stable != chrome.stable


async def test_meta_impersonate_chooses_the_profile_per_request(
    h2: int, make_transport: MakeTransport
) -> None:
    async with relay(h2) as seen:
        url = f"https://127.0.0.1:{seen.port}/"
        curl, _ = await make_transport(None, "curl")
        await curl.fetch(Request(url))
        await curl.fetch(Request(url, meta={"impersonate": "firefox"}))
        await curl.fetch(Request(url, meta={"impersonate": "safari"}))
    chrome = [h for h in seen.hellos if h.ciphers == CHROME_CIPHERS]
    others = {h.stable for h in seen.hellos if h.ciphers != CHROME_CIPHERS}
    assert len(chrome) >= 1 and len(others) == 2  # a connection per profile, never shared


def not_a_browser(hello: Hello) -> bool:
    return not hello.greased


async def test_a_fingerprint_wall_stops_aiohttp_and_lets_curl_through(
    h2: int, make_transport: MakeTransport
) -> None:
    async with relay(h2, refuse=not_a_browser) as wall:
        url = f"https://127.0.0.1:{wall.port}/"
        aiohttp, _ = await make_transport()
        with pytest.raises((ConnectError, ConnectionLost)):
            await aiohttp.fetch(Request(url))
        curl, _ = await make_transport(None, "curl")
        assert (await curl.fetch(Request(url))).body == b"<p>2</p>"


async def test_an_unknown_profile_is_refused_at_start_or_per_request(
    h2: int, make_transport: MakeTransport
) -> None:
    with pytest.raises(ConfigError, match="DOWNLOAD_IMPERSONATE 'netscape'"):
        await make_transport({"DOWNLOAD_IMPERSONATE": "netscape"}, "curl")
    curl, _ = await make_transport(None, "curl")
    with pytest.raises(Exception, match="meta\\['impersonate'\\] 'netscape'"):
        await curl.fetch(Request(f"https://127.0.0.1:{h2}/", meta={"impersonate": "netscape"}))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DOWNLOAD_TLS_MIN_VERSION", "TLSv1.3"),
        ("DOWNLOAD_TLS_MAX_VERSION", "TLSv1.2"),
        ("DOWNLOADER_CLIENT_TLS_CIPHERS", "ECDHE+AESGCM"),
    ],
)
async def test_tls_settings_a_browser_profile_fixes_are_refused_by_curl(
    name: str, value: str, make_transport: MakeTransport
) -> None:
    with pytest.raises(ConfigError, match=f"unset {name}"):
        await make_transport({name: value}, "curl")


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_certificates_are_checked_by_each_transport_when_asked(
    via: str,
    h2: int,
    ca: trustme.CA,
    tmp_path: Path,
    make_transport: MakeTransport,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"https://127.0.0.1:{h2}/"
    strict, stats = await make_transport({"DOWNLOAD_VERIFY_CERTIFICATES": True}, via)
    with pytest.raises(TLSCertificateError, match="certificate verify failed"):
        await strict.fetch(Request(url))  # a CA nobody trusts
    assert stats.values["downloader/exception_type_count/TLSCertificateError"] == 1
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    trusting, _ = await make_transport({"DOWNLOAD_VERIFY_CERTIFICATES": True}, via)
    assert (await trusting.fetch(Request(url))).status == 200


# -- the Downloader's choice -----------------------------------------------------------------


class Recorder:
    """A transport standing in for Chromium (which the tests cannot assume): it records
    what reached it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def fetch(self, request: Request) -> Response:
        self.seen.append(request.url)
        return Response(request.url, 200, body=b"rendered", request=request)


async def test_meta_transport_browser_renders_and_render_true_still_does(
    h2: int,
) -> None:
    browser = Recorder()
    ctx = make_context()
    async with Downloader(ctx, None, browser=browser) as downloader:
        url = f"https://127.0.0.1:{h2}/"
        await downloader.fetch(Request(url + "?a", meta={"transport": "browser"}))
        await downloader.fetch(Request(url + "?b", render=True))
        plain = await downloader.fetch(Request(url + "?c"))
    assert browser.seen == [url + "?a", url + "?b"]
    assert isinstance(plain, Response) and plain.body == b"<p>1.1</p>"


async def test_download_transport_browser_renders_every_request(h2: int) -> None:
    browser = Recorder()
    ctx = make_context({"DOWNLOAD_TRANSPORT": "browser"})
    async with Downloader(ctx, None, browser=browser) as downloader:
        url = f"https://127.0.0.1:{h2}/"
        await downloader.fetch(Request(url))
        plain = await downloader.fetch(Request(url + "?x", meta={"transport": "aiohttp"}))
    assert browser.seen == [url]
    assert isinstance(plain, Response) and plain.protocol == "HTTP/1.1"


async def test_meta_transport_picks_the_transport_of_one_request(
    h2: int, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    url = f"https://127.0.0.1:{h2}/"
    plain = await downloader.fetch(Request(url))
    assert isinstance(plain, Response) and plain.protocol == "HTTP/1.1"
    for name in ("httpx", "curl"):
        response = await downloader.fetch(Request(url, meta={"transport": name}))
        assert isinstance(response, Response) and response.protocol == "HTTP/2", name
    stats = downloader.crawler.stats.values
    assert stats["downloader/request_count"] == 3 == stats["downloader/response_count"]


async def test_download_transport_sets_the_crawls_transport(
    h2: int, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader({"DOWNLOAD_TRANSPORT": "httpx"})
    url = f"https://127.0.0.1:{h2}/"
    response = await downloader.fetch(Request(url))
    assert isinstance(response, Response) and response.protocol == "HTTP/2"
    back = await downloader.fetch(Request(url, meta={"transport": "aiohttp"}))
    assert isinstance(back, Response) and back.protocol == "HTTP/1.1"


async def test_an_unknown_transport_is_refused(make_downloader: MakeDownloader) -> None:
    with pytest.raises(ConfigError, match="DOWNLOAD_TRANSPORT 'h3': must be one of aiohttp"):
        await make_downloader({"DOWNLOAD_TRANSPORT": "h3"})
    downloader = await make_downloader()
    for _ in range(2):
        with pytest.raises(IgnoreRequest, match="meta\\['transport'\\] 'h3': must be one of"):
            await downloader.fetch(Request("http://127.0.0.1:9/", meta={"transport": "h3"}))
    assert downloader.crawler.stats.values["downloader/transport_unavailable"] == 2


async def test_a_missing_extra_names_it(
    make_downloader: MakeDownloader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "skitter.downloader._httpx", raising=False)
    monkeypatch.setitem(sys.modules, "h2", None)  # import h2 now fails, as when missing
    with pytest.raises(ConfigError, match=r"needs h2 .*pip install 'skitter\[http2\]'$"):
        await make_downloader({"DOWNLOAD_TRANSPORT": "httpx"})
    downloader = await make_downloader()
    with pytest.raises(IgnoreRequest, match=r"pip install 'skitter\[http2\]'"):
        await downloader.fetch(Request("http://127.0.0.1:9/", meta={"transport": "httpx"}))


def test_a_crawl_that_never_asks_for_them_never_imports_them() -> None:
    code = (
        "import sys, asyncio\n"
        "from skitter.downloader import Downloader\n"
        "from skitter.settings import Settings\n"
        "from skitter.testing import TestCrawler\n"
        "Downloader(TestCrawler(Settings({})), None)\n"
        "print(sorted(m for m in ('httpcore', 'h2', 'curl_cffi') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the same middlewares, whoever downloads ------------------------------------------------


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_a_crawl_through_each_transport_keeps_cookies_redirects_and_retries(
    via: str, h2: int
) -> None:
    base = f"https://127.0.0.1:{h2}"

    class Site(Spider):
        name = "site"
        start_urls = (base + "/login", base + "/flaky")
        custom_settings = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING"}

        def parse(self, response: Response) -> Any:
            item = {"url": response.url, "body": response.text, "protocol": response.protocol}
            items.append(item)
            yield item

    items: list[dict[str, Any]] = []
    crawler = Crawler(Site, {"DOWNLOAD_TRANSPORT": via})
    stats = await crawler.run()
    assert stats["item_scraped_count"] == 2
    home = next(item for item in items if item["url"].endswith("/home"))
    assert home["body"] == "<p>session=abc</p>"  # the cookie, sent by CookiesMiddleware
    assert stats["downloader/response_status_count/302"] == 1  # followed by the middleware
    assert stats["downloader/response_status_count/503"] == 1  # retried by the middleware
    assert stats["downloader/response_status_count/200"] == 2
    assert stats["downloader/request_method_count/GET"] == 4
    assert stats["retry/count"] == 1
    assert HITS["/flaky"] == 2


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_head_requests_end_without_a_body(
    via: str, h2: int, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport(None, via)
    response = await transport.fetch(Request(f"https://127.0.0.1:{h2}/", method="HEAD"))
    assert (response.status, response.body) == (200, b"")
    again = await transport.fetch(Request(f"https://127.0.0.1:{h2}/"))  # the connection
    assert again.body.startswith(b"<p>")  # still good for the next request


async def slow(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    await response.prepare(request)
    if request.path == "/stall":  # the head, then nothing
        await asyncio.sleep(30)  # a stall: the client's timeout ends it long before
    await response.write(b"done")
    return response


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize(
    ("settings", "meta", "problem"),
    [
        ({"DOWNLOAD_TIMEOUT": 0.5}, {}, "download took longer than 0.5 seconds"),
        ({}, {"download_timeout": 0.5}, "download took longer than 0.5 seconds"),
        ({"DOWNLOAD_READ_TIMEOUT": 1.0}, {}, "timeout"),
    ],
)
async def test_timeouts_hold_for_each_transport(
    via: str,
    settings: dict[str, float],
    meta: dict[str, float],
    problem: str,
    serve: Any,
    make_transport: MakeTransport,
) -> None:
    site = web.Application()
    site.router.add_get("/{tail:.*}", slow)
    base = await serve(site)
    transport, stats = await make_transport(settings, via)
    with pytest.raises(DownloadTimeout, match=problem):
        await transport.fetch(Request(base + "/stall", meta=dict(meta)))
    assert stats.values["downloader/exception_type_count/DownloadTimeout"] == 1
    assert (await transport.fetch(Request(base + "/fine"))).body == b"done"  # still usable


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_each_transport_asks_the_crawls_resolver(
    via: str, serve: Any, make_transport: MakeTransport
) -> None:
    site = web.Application()
    site.router.add_get("/{tail:.*}", slow)
    port = int((await serve(site)).rsplit(":", 1)[1])
    hosts = {"site.test": "127.0.0.1"}
    LOOKUPS.clear()
    transport, _ = await make_transport({"DNS_RESOLVER": MapResolver, "TEST_HOSTS": hosts}, via)
    response = await transport.fetch(Request(f"http://site.test:{port}/fine"))
    assert (response.body, response.ip_address) == (b"done", "127.0.0.1")
    assert LOOKUPS["site.test"] == 1
    with pytest.raises(DNSLookupError, match=r"nowhere\.test"):
        await transport.fetch(Request(f"http://nowhere.test:{port}/fine"))


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_no_transport_keeps_cookies_of_its_own(
    via: str, h2: int, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport(None, via)
    await transport.fetch(Request(f"https://127.0.0.1:{h2}/login"))  # sets session=abc
    response = await transport.fetch(Request(f"https://127.0.0.1:{h2}/home"))
    assert response.body == b"<p>none</p>"


SEEN = web.AppKey("seen", list[str | None])


async def forward(request: web.Request) -> web.Response:
    request.app[SEEN].append(request.headers.get("Proxy-Authorization"))
    return web.Response(text="via proxy " + request.raw_path)


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_meta_proxy_with_credentials_works_for_each_transport(
    via: str, serve: Any, make_transport: MakeTransport
) -> None:
    proxy_app = web.Application()
    proxy_app[SEEN] = []
    proxy_app.router.add_route("*", "/{tail:.*}", forward)
    proxy = await serve(proxy_app)
    with_auth = proxy.replace("http://", "http://user:s3cret@")
    transport, _ = await make_transport(None, via)
    response = await transport.fetch(
        Request("http://target.test/page?q=1", meta={"proxy": with_auth})
    )
    assert response.body == b"via proxy http://target.test/page?q=1"
    assert proxy_app[SEEN] == ["Basic " + base64.b64encode(b"user:s3cret").decode()]


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_an_unreachable_proxys_password_is_never_shown(
    via: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport(None, via)
    with pytest.raises(ConnectError) as info:
        await transport.fetch(
            Request("http://target.test/", meta={"proxy": "http://user:s3cret@127.0.0.1:9"})
        )
    assert "s3cret" not in str(info.value)
    assert info.value.__cause__ is None or "s3cret" not in str(info.value.__cause__)
