"""Rendered pages stay inside allowed_domains, in real headless Chromium: the browser
follows redirects and loads sub-resources itself, so every request it makes is judged,
redirect hops included. The site answers as 127.0.0.1 and as localhost (allowed:
127.0.0.1 only) and counts hits per host."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter.downloader import BrowserTransport, OffsiteGuard
from skitter.engine import Stats
from skitter.exceptions import IgnoreRequest, InvalidURL
from skitter.http import Request, Response, Scope
from skitter.settings import Settings

from .conftest import FAST

ALLOWED = ["127.0.0.1"]
SETTINGS = {"BROWSER_BLOCK_RESOURCES": []}  # nothing blocked by type: only by scope


class Shop:
    allowed_domains = ALLOWED


def html(body: str) -> web.Response:
    return web.Response(
        text=f"<!DOCTYPE html><html><head></head><body>{body}</body></html>",
        content_type="text/html",
    )


async def echo_socket(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    await ws.send_str("hello")
    await ws.close()
    return ws


def pages(port: int) -> dict[str, Any]:
    away = f"http://localhost:{port}"
    return {
        "/moved": (302, f"{away}/landing"),
        "/landing": "offsite landing",
        "/img-hop": (302, f"{away}/pixel"),
        "/script-hop": (302, f"{away}/script.js"),
        "/pixel": lambda r: web.Response(body=b"GIF89a", content_type="image/gif"),
        "/script.js": lambda r: web.Response(text="1;", content_type="text/javascript"),
        "/frame": "frame",
        "/api": "{}",
        "/ws": echo_socket,
        "/page": lambda r: html(
            # direct offsite sub-resources, and ones that redirect offsite
            f'<img src="{away}/pixel"><script src="//localhost:{port}/script.js"></script>'
            f'<iframe src="{away}/frame"></iframe><img src="/img-hop">'
            '<script src="/script-hop"></script><img src="/pixel"><p id="own">own</p>'
            f"<script>fetch('{away}/api').catch(() => {{}});"
            "fetch('/api').then(() => document.body.dataset.api = 'ok');</script>"
        ),
        "/navigates": lambda r: html(f"<script>location.href = '{away}/landing';</script>"),
        "/sockets": lambda r: html(
            "<p id='out'></p><script>"
            f"const off = new WebSocket('ws://localhost:{port}/ws');"
            f"const own = new WebSocket('ws://127.0.0.1:{port}/ws');"
            "own.onmessage = (e) => { document.getElementById('out').textContent = e.data; };"
            "</script>"
        ),
    }


async def test_a_main_document_redirected_offsite_fails_as_offsite(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    site, port = await host_site({})
    site.pages.update(pages(port))
    made = await downloader(SETTINGS, Shop())
    request = Request(f"http://127.0.0.1:{port}/moved", render=True)
    with pytest.raises(IgnoreRequest, match=rf"offsite: localhost:{port} .*sent there") as info:
        await made.fetch(request)
    assert info.value.request is request
    assert site.on("localhost") == 0
    assert made.crawler.stats.get("offsite/filtered") == 1


async def test_offsite_sub_resources_and_their_redirects_are_not_loaded(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    site, port = await host_site({})
    site.pages.update(pages(port))
    made = await downloader(SETTINGS, Shop())
    response = await made.fetch(
        Request(
            f"http://127.0.0.1:{port}/page", render=True, meta={"browser_wait_for": "[data-api]"}
        )
    )
    assert isinstance(response, Response)
    assert response.status == 200
    assert response.css("#own::text").get() == "own"  # the page itself rendered
    assert site.on("localhost") == 0, site.hits
    for path in ("/img-hop", "/script-hop", "/pixel", "/api"):  # its own requests went out
        assert site.hits[("127.0.0.1", path)] == 1, path
    # img, script, iframe and fetch to localhost, and the two redirect hops
    assert made.crawler.stats.get("browser/offsite_blocked") == 6


async def test_a_script_sending_the_page_offsite_fails_the_request(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    site, port = await host_site({})
    site.pages.update(pages(port))
    made = await downloader(SETTINGS, Shop())
    with pytest.raises(IgnoreRequest, match="offsite"):
        await made.fetch(
            Request(f"http://127.0.0.1:{port}/navigates", render=True, meta={"download_timeout": 5})
        )
    assert site.on("localhost") == 0


async def test_websockets_to_offsite_hosts_are_closed(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    site, port = await host_site({})
    site.pages.update(pages(port))
    made = await downloader(SETTINGS, Shop())
    response = await made.fetch(
        Request(
            f"http://127.0.0.1:{port}/sockets",
            render=True,
            meta={"browser_wait_for": "#out:not(:empty)"},
        )
    )
    assert isinstance(response, Response)
    assert response.css("#out::text").get() == "hello"  # the one in scope works
    assert site.hits[("127.0.0.1", "/ws")] == 1
    assert site.on("localhost") == 0
    assert made.crawler.stats.get("browser/offsite_blocked") == 1


async def test_the_browser_judges_the_url_as_chromium_reads_it(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    """``http://localhost:P\\@127.0.0.1:P/``: Chromium reads host localhost, a parser
    that splits at the last ``@`` reads 127.0.0.1. The Downloader refuses what yarl
    cannot read; the browser's own guard judges Chromium's reading."""
    site, port = await host_site({"/": "home", "/@127.0.0.1": "home"})
    tricky = f"http://localhost:{port}\\@127.0.0.1:{port}/"
    made = await downloader(SETTINGS, Shop())
    with pytest.raises(InvalidURL):
        await made.fetch(Request(tricky, render=True))
    stats = Stats()
    browser = BrowserTransport(
        Settings({**FAST, **SETTINGS}), stats, offsite=OffsiteGuard(Scope(ALLOWED), stats)
    )
    try:
        with pytest.raises(IgnoreRequest, match=f"offsite: localhost:{port}"):
            await browser.fetch(Request(tricky, render=True))
    finally:
        await browser.close()
    assert site.on("localhost") == 0


async def test_a_cross_site_iframe_is_guarded_like_its_page(
    chromium: None, host_site: Any, downloader: Any
) -> None:
    """A cross-site iframe would run in a DevTools target of its own under site
    isolation, out of the page guard's sight: its redirects would escape."""
    b, port_b = await host_site({"/pixel": lambda r: web.Response(body=b"GIF89a")})
    a, port_a = await host_site({"/hop": (302, f"http://localhost:{port_b}/pixel")})
    a.pages["/frame"] = '<img src="/hop"><img src="/pixel-direct">'
    a.pages["/"] = f'<iframe src="http://localhost:{port_a}/frame"></iframe>'

    class TwoSites:
        allowed_domains = ["127.0.0.1", f"localhost:{port_a}"]

    made = await downloader(SETTINGS, TwoSites())
    response = await made.fetch(Request(f"http://127.0.0.1:{port_a}/", render=True))
    assert isinstance(response, Response)
    assert a.hits[("localhost", "/hop")] == 1  # the iframe loaded, and asked
    assert b.on("localhost") == 0
