"""BrowserTransport and the Downloader's routing, against a real local site and real
headless Chromium: the rendered DOM, resource blocking, timeouts, size limits, errors,
cookies shared with the HTTP side, kept pages and a browser killed under a page."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from skitter.downloader import BrowserTransport
from skitter.engine import Stats
from skitter.exceptions import DownloadTimeout, InvalidURL, RequestError, ResponseTooLarge
from skitter.http import Request, Response
from skitter.settings import Settings

from .conftest import FAST, ITEM_COUNT, JsSite, chromium_pids, kill_chromium


@pytest.fixture
async def transport() -> AsyncIterator[Any]:
    """``await transport(settings) -> (BrowserTransport, Stats)``, closed after the test."""
    opened: list[BrowserTransport] = []

    async def make(settings: dict[str, Any] | None = None) -> tuple[BrowserTransport, Stats]:
        stats = Stats()
        browser = BrowserTransport(Settings({**FAST, **(settings or {})}), stats)
        opened.append(browser)
        await browser.open()
        return browser, stats

    yield make
    for browser in opened:
        await browser.close()


async def test_the_response_is_the_rendered_dom_without_images(
    site: tuple[JsSite, str], transport: Any
) -> None:
    js_site, base = site
    browser, stats = await transport()
    response = await browser.fetch(Request(base + "/items", render=True))
    assert response.status == 200
    assert response.url == base + "/items"
    assert response.css("a.item::text").getall() == [f"Item {n}" for n in range(1, ITEM_COUNT + 1)]
    assert response.headers["Content-Type"] == b"text/html; charset=utf-8"
    assert response.flags == ["rendered"]
    assert js_site.hits["/pixel.png"] == 0  # blocked by default
    assert stats.get("browser/blocked_request_count") == 1
    assert stats.get("downloader/response_status_count/200") == 1
    assert stats.get("browser/launch_count") == 1


async def test_nothing_is_blocked_when_asked(site: tuple[JsSite, str], transport: Any) -> None:
    js_site, base = site
    browser, _ = await transport({"BROWSER_BLOCK_RESOURCES": []})
    await browser.fetch(Request(base + "/items", render=True))
    assert js_site.hits["/pixel.png"] == 1


async def test_a_page_that_never_finishes_loading_times_out(
    site: tuple[JsSite, str], transport: Any
) -> None:
    js_site, base = site
    browser, stats = await transport({"DOWNLOAD_TIMEOUT": 1.0})
    # Its script is held until the test ends, so the load event never fires: the fetch
    # ends by its timeout on any machine (on a loaded one the second may run out before
    # the page even arrives: the same DownloadTimeout, waiting for the same 'load').
    with pytest.raises(DownloadTimeout, match=r"/hangs.*'load'"):
        await browser.fetch(Request(base + "/hangs", render=True))
    assert stats.get("downloader/exception_type_count/DownloadTimeout") == 1
    js_site.hold_load = False
    # The same page without the held script loads; its timeout is the suite's hang guard
    # for a browser fetch, not the subject.
    guard = {"download_timeout": FAST["DOWNLOAD_TIMEOUT"]}
    response = await browser.fetch(Request(base + "/hangs", render=True, meta=guard))
    assert response.css("#done::text").get() == "loaded"
    assert stats.get("downloader/exception_type_count/DownloadTimeout") == 1


async def test_wait_for_a_selector_that_javascript_adds_late(
    site: tuple[JsSite, str], transport: Any
) -> None:
    _, base = site
    browser, _ = await transport()
    early = await browser.fetch(Request(base + "/late?held=1", render=True))
    assert early.css("#late").get() is None
    late = await browser.fetch(
        Request(base + "/late", render=True, meta={"browser_wait_for": "#late"})
    )
    assert late.css("#late::text").get() == "here"
    never = Request(base + "/late", render=True, meta={"browser_wait_for": "#nope"})
    never.meta["download_timeout"] = 0.5
    with pytest.raises(DownloadTimeout, match="#nope"):
        await browser.fetch(never)


async def test_the_rendered_html_is_bounded_by_download_maxsize(
    site: tuple[JsSite, str], transport: Any
) -> None:
    _, base = site
    browser, _ = await transport({"DOWNLOAD_MAXSIZE": 100})
    with pytest.raises(ResponseTooLarge, match="items"):
        await browser.fetch(Request(base + "/items", render=True))


async def test_the_main_documents_headers_are_bounded_by_download_max_headers_size(
    site: tuple[JsSite, str], transport: Any
) -> None:
    _, base = site
    browser, stats = await transport({"DOWNLOAD_MAX_HEADERS_SIZE": 10_000})
    with pytest.raises(ResponseTooLarge, match=r"response headers of \d+ bytes") as info:
        await browser.fetch(Request(base + "/big-headers?lines=4&size=5000", render=True))
    assert "vvvv" not in str(info.value)
    assert stats.get("downloader/exception_type_count/ResponseTooLarge") == 1
    fine = await browser.fetch(Request(base + "/big-headers?lines=1&size=5000", render=True))
    assert fine.css("p::text").get() == "big headers"


async def test_headers_larger_than_chromium_takes_are_response_too_large(
    site: tuple[JsSite, str], transport: Any
) -> None:
    """Not a ConnectionLost: a retry would get the same headers."""
    _, base = site
    browser, _ = await transport({"DOWNLOAD_MAX_HEADERS_SIZE": 0})
    with pytest.raises(ResponseTooLarge, match="ERR_RESPONSE_HEADERS_TOO_BIG"):
        await browser.fetch(Request(base + "/big-headers?lines=12&size=30000", render=True))


async def test_bad_urls_and_refused_connections_are_request_errors(
    site: tuple[JsSite, str], transport: Any
) -> None:
    browser, _ = await transport()
    with pytest.raises(InvalidURL, match="ftp://"):
        await browser.fetch(Request("ftp://127.0.0.1/file", render=True))
    with pytest.raises(RequestError, match=r"127\.0\.0\.1:9/"):
        await browser.fetch(Request("http://127.0.0.1:9/", render=True))


async def test_missing_chromium_is_a_clear_error_naming_what_to_install(transport: Any) -> None:
    browser, _ = await transport({"BROWSER_EXECUTABLE_PATH": "/nonexistent/chromium"})
    with pytest.raises(RequestError, match=r"<GET http://127\.0\.0\.1/>.*apt-get install chromium"):
        await browser.fetch(Request("http://127.0.0.1/", render=True))
    assert not browser.started


async def test_a_killed_browser_fails_its_page_retryably_and_is_restarted(
    site: tuple[JsSite, str], transport: Any
) -> None:
    js_site, base = site
    browser, stats = await transport()
    await browser.fetch(Request(base + "/item/1", render=True))
    js_site.on_slow_script.append(kill_chromium)
    with pytest.raises(RequestError) as caught:
        await browser.fetch(Request(base + "/item/2?slow=1", render=True))
    assert type(caught.value).__name__ == "ConnectionLost"  # a TransportError: retried
    assert "browser died" in str(caught.value)
    js_site.on_slow_script.clear()
    response = await browser.fetch(Request(base + "/item/3", render=True))
    assert response.css("h1::text").get() == "Item 3"
    assert stats.get("browser/restart_count") == 1
    assert stats.get("browser/launch_count") == 2


async def test_a_kept_page_reaches_the_caller_and_frees_its_slot_when_closed(
    site: tuple[JsSite, str], transport: Any
) -> None:
    _, base = site
    browser, _ = await transport({"BROWSER_CONCURRENCY": 1})
    request = Request(base + "/late", render=True, meta={"browser_keep_page": True})
    response = await browser.fetch(request)
    page = response.meta["browser_page"]
    await page.wait_for_selector("#late")
    assert await page.text_content("#late") == "here"
    await page.close()
    async with asyncio.timeout(10):  # would wait forever if the slot were still held
        again = await browser.fetch(Request(base + "/item/4", render=True))
    assert again.css("h1::text").get() == "Item 4"
    assert "browser_page" not in again.meta


async def test_headers_from_the_middlewares_reach_the_server(
    site: tuple[JsSite, str], downloader: Any
) -> None:
    _, base = site
    made = await downloader({"USER_AGENT": "skitter-test/1"})
    request = Request(base + "/echo", headers={"X-Token": "t1"}, render=True)
    response = await made.fetch(request)
    assert isinstance(response, Response)
    sent = {li.attrib["data-name"]: li.css("::text").get() for li in response.css("#headers li")}
    assert sent["user-agent"] == "skitter-test/1"
    assert sent["x-token"] == "t1"
    assert sent["accept-language"] == "en"  # DEFAULT_REQUEST_HEADERS


async def test_cookies_are_shared_with_http_requests_when_asked(
    site: tuple[JsSite, str], downloader: Any
) -> None:
    _, base = site
    made = await downloader({"BROWSER_SHARE_COOKIES": True})
    await made.fetch(Request(base + "/echo", cookies={"login": "alice"}))  # HTTP, into the jar
    rendered = await made.fetch(Request(base + "/echo", render=True))
    assert rendered.css("[data-cookie=login]::text").get() == "alice"
    await made.fetch(Request(base + "/set-cookie", render=True))  # server and script cookies
    plain = await made.fetch(Request(base + "/echo", dont_filter=True))
    assert plain.flags == []
    cookies = {li.attrib["data-cookie"]: li.css("::text").get() for li in plain.css("#cookies li")}
    assert cookies == {"login": "alice", "server": "from-header", "js": "from-script"}


async def test_cookies_are_not_shared_by_default(site: tuple[JsSite, str], downloader: Any) -> None:
    _, base = site
    made = await downloader()
    await made.fetch(Request(base + "/echo", cookies={"login": "alice"}))
    rendered = await made.fetch(Request(base + "/echo", render=True))
    assert rendered.css("#cookies li").getall() == []
    response = await made.fetch(Request(base + "/set-cookie", render=True))
    assert "Set-Cookie" not in response.headers
    plain = await made.fetch(Request(base + "/echo"))
    cookies = plain.css("#cookies li::attr(data-cookie)").getall()
    assert cookies == ["login"]


async def test_the_spider_default_renders_and_dont_render_opts_out(
    site: tuple[JsSite, str], downloader: Any
) -> None:
    _, base = site

    class Rendering:
        render = True

    made = await downloader(spider=Rendering())
    rendered = await made.fetch(Request(base + "/items"))
    assert len(rendered.css("a.item")) == ITEM_COUNT
    plain = await made.fetch(Request(base + "/items", meta={"dont_render": True}))
    assert plain.css("a.item") == []
    assert plain.flags == []


async def test_plain_requests_never_start_chromium(
    site: tuple[JsSite, str], downloader: Any
) -> None:
    _, base = site
    made = await downloader()
    response = await made.fetch(Request(base + "/items"))
    assert response.css("a.item") == []  # the list is built by JavaScript
    assert not made.browser.started
    assert chromium_pids() == []
    assert made.crawler.stats.get("browser/launch_count") is None
