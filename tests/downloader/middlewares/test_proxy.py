"""Proxies: meta["proxy"] in the transport, environment proxies in HttpProxyMiddleware.

The proxy is a tiny aiohttp.web app that records the absolute-form request line it
receives; it forwards requests for 127.0.0.1 to the real site and answers any other
host itself, so no test ever leaves the loopback interface.
"""

from __future__ import annotations

import base64
import os
import traceback

import aiohttp
import pytest
from aiohttp import web

from skitter.downloader import HttpProxyMiddleware
from skitter.exceptions import ConnectError
from skitter.http import Request, Response

from ..conftest import HTTP_TRANSPORTS, MakeDownloader

ELSEWHERE = "http://target.test/page?q=1"  # never resolved: the proxy answers for it


SEEN = web.AppKey("seen", list[dict[str, str | None]])


async def proxy_handler(request: web.Request) -> web.Response:
    seen = {"target": request.raw_path, "auth": request.headers.get("Proxy-Authorization")}
    request.app[SEEN].append(seen)
    if request.url.host == "127.0.0.1":
        async with (
            aiohttp.ClientSession() as session,
            session.get(str(request.url)) as upstream,
        ):
            body = await upstream.read()
        return web.Response(body=body, headers={"Via": "1.1 test-proxy"})
    return web.Response(text="answered by proxy", headers={"Via": "1.1 test-proxy"})


async def site_handler(request: web.Request) -> web.Response:
    return web.Response(text="from site")


@pytest.fixture
async def proxy_app() -> web.Application:
    app = web.Application()
    app[SEEN] = []
    app.router.add_route("*", "/{tail:.*}", proxy_handler)
    return app


@pytest.fixture
async def proxy(serve, proxy_app: web.Application) -> str:  # type: ignore[no-untyped-def]
    return await serve(proxy_app)


@pytest.fixture
async def site(serve) -> str:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_get("/", site_handler)
    return await serve(app)


@pytest.fixture(autouse=True)
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


async def get(downloader, request: Request) -> Response:  # type: ignore[no-untyped-def]
    response = await downloader.fetch(request)
    assert isinstance(response, Response)
    return response


async def test_meta_proxy_sends_the_request_through_it(
    proxy: str, proxy_app: web.Application, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    response = await get(downloader, Request(ELSEWHERE, meta={"proxy": proxy}))
    assert response.text == "answered by proxy"
    assert proxy_app[SEEN] == [{"target": ELSEWHERE, "auth": None}]


async def test_proxy_forwards_to_the_site(
    proxy: str, site: str, proxy_app: web.Application, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    response = await get(downloader, Request(f"{site}/", meta={"proxy": proxy}))
    assert response.text == "from site"
    assert response.headers["Via"] == b"1.1 test-proxy"
    assert proxy_app[SEEN][0]["target"] == f"{site}/"


async def test_credentials_in_the_proxy_url_become_proxy_authorization(
    proxy: str, proxy_app: web.Application, make_downloader: MakeDownloader
) -> None:
    downloader = await make_downloader()
    with_auth = proxy.replace("http://", "http://user:p%40ss@")
    await get(downloader, Request(ELSEWHERE, meta={"proxy": with_auth}))
    assert proxy_app[SEEN][0]["auth"] == "Basic dXNlcjpwQHNz"  # user:p@ss


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_a_password_with_an_unescaped_slash_is_sent_as_the_password(
    proxy: str, proxy_app: web.Application, make_downloader: MakeDownloader, transport: str
) -> None:
    """The userinfo runs to the last @ (skitter's one rule): urlsplit would take 'pa' for
    a port and quote it in its error."""
    downloader = await make_downloader({"DOWNLOAD_TRANSPORT": transport})
    with_auth = proxy.replace("http://", "http://user:pa/Zq9x@")
    response = await get(downloader, Request(ELSEWHERE, meta={"proxy": with_auth}))
    assert response.text == "answered by proxy"
    assert proxy_app[SEEN][0]["auth"] == "Basic " + base64.b64encode(b"user:pa/Zq9x").decode()


async def test_environment_proxy_is_used(
    proxy: str,
    site: str,
    proxy_app: web.Application,
    make_downloader: MakeDownloader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", proxy)
    downloader = await make_downloader()
    request = Request(f"{site}/")
    assert (await get(downloader, request)).text == "from site"
    assert request.meta["proxy"] == proxy
    assert proxy_app[SEEN][0]["target"] == f"{site}/"


async def test_meta_proxy_none_goes_direct_despite_the_environment(
    proxy: str,
    site: str,
    proxy_app: web.Application,
    make_downloader: MakeDownloader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", proxy)
    downloader = await make_downloader()
    response = await get(downloader, Request(f"{site}/", meta={"proxy": None}))
    assert "Via" not in response.headers
    assert proxy_app[SEEN] == []


async def test_no_proxy_bypasses_the_environment_proxy(
    proxy: str,
    site: str,
    proxy_app: web.Application,
    make_downloader: MakeDownloader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", proxy)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    downloader = await make_downloader()
    response = await get(downloader, Request(f"{site}/"))
    assert "Via" not in response.headers
    assert proxy_app[SEEN] == []


async def test_explicit_meta_proxy_wins_over_the_environment(
    proxy: str, site: str, make_downloader: MakeDownloader, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", site)  # a "proxy" that is not one
    downloader = await make_downloader()
    response = await get(downloader, Request(ELSEWHERE, meta={"proxy": proxy}))
    assert response.text == "answered by proxy"


async def test_disabled_middleware_ignores_the_environment(
    proxy: str,
    site: str,
    proxy_app: web.Application,
    make_downloader: MakeDownloader,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("http_proxy", proxy)
    downloader = await make_downloader({"HTTPPROXY_ENABLED": False})
    assert downloader.middleware(HttpProxyMiddleware) is None
    await get(downloader, Request(f"{site}/"))
    assert proxy_app[SEEN] == []


async def test_a_proxy_error_shows_the_proxys_credentials_masked(
    serve,
    make_downloader: MakeDownloader,  # type: ignore[no-untyped-def]
) -> None:
    """aiohttp's error for a refused CONNECT quotes the proxy URL with its password and
    carries the Proxy-Authorization header: neither may reach a log or a traceback."""
    refusing = await serve(web.Application())  # answers CONNECT with 404
    with_auth = refusing.replace("http://", "http://bob:hunter2pass@")
    downloader = await make_downloader({"RETRY_ENABLED": False})
    request = Request("https://target.test/", meta={"proxy": with_auth})
    with pytest.raises(ConnectError) as raised:
        await downloader.fetch(request)
    assert "url='http://bob:***@127.0.0.1" in str(raised.value)
    told = "".join(traceback.format_exception(raised.value))
    assert "hunter2pass" not in told
    assert base64.b64encode(b"bob:hunter2pass").decode() not in told
