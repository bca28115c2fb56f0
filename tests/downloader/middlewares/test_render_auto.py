"""``render="auto"`` without a browser: URL patterns, what is learned, the accepted
values and the loud refusals, and crawls whose pages are all fine over HTTP (Chromium
never starts). The rendering itself is tested with real Chromium in
tests/downloader/browser/test_render_auto.py."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from yarl import URL

from skitter import Crawler, Request, Response, Spider
from skitter.downloader import AutoRenderMiddleware, wants_render
from skitter.downloader.middlewares import render_default
from skitter.downloader.middlewares._render_memory import RenderMemory, url_pattern
from skitter.exceptions import ConfigError, CrawlFailed
from skitter.http._codec import decode_request, encode_request

from ..conftest import MakeDownloader

FAST = {"RETRY_DELAYS": [0.0], "DOWNLOAD_TIMEOUT": 10.0, "LOG_LEVEL": "WARNING"}
OFF = {"skitter.downloader.AutoRenderMiddleware": None}


@pytest.mark.parametrize(
    ("url", "pattern"),
    [
        ("http://Shop.example/product/42", "shop.example/product/{id}"),
        ("https://shop.example/product/7?page=2#x", "shop.example/product/{id}"),
        ("http://shop.example:8080/p/item-42/", "shop.example:8080/p/{id}/"),
        ("http://s.e/u/3f2a9c1e-77b0-4c1d-9f00-1b2c3d4e5f60", "s.e/u/{id}"),
        ("http://s.e/h/deadbeefcafebabedeadbeef", "s.e/h/{id}"),
        ("http://s.e/blue-cotton-shirt", "s.e/{slug}"),
        ("http://s.e/new-arrivals", "s.e/new-arrivals"),
        ("http://s.e/category/shoes", "s.e/category/shoes"),
        ("http://s.e/", "s.e/"),
        ("http://s.e", "s.e/"),  # the same page as "/"
    ],
)
def test_url_patterns_generalise_variable_segments(url: str, pattern: str) -> None:
    assert url_pattern(URL(url)) == pattern


def test_a_pattern_is_learned_after_learn_pages_in_a_row() -> None:
    memory = RenderMemory(learn=2, recheck=0, size=10)
    assert memory.straight_to_browser("p") is False
    assert memory.observe("p", needed=True) is False
    assert memory.observe("p", needed=False) is False  # a page fine over HTTP: reset
    assert memory.observe("p", needed=True) is False
    assert memory.straight_to_browser("p") is False
    assert memory.observe("p", needed=True) is True  # learned now, said once
    assert memory.observe("p", needed=True) is False
    assert [memory.straight_to_browser("p") for _ in range(5)] == [True] * 5
    assert memory.learned("p") and not memory.learned("other")


def test_static_patterns_stay_http_and_a_fine_page_unlearns() -> None:
    memory = RenderMemory(learn=1, recheck=0, size=10)
    for _ in range(5):
        memory.observe("static", needed=False)
    assert memory.straight_to_browser("static") is False
    memory.observe("js", needed=True)
    assert memory.straight_to_browser("js") is True
    memory.observe("js", needed=False)  # the site changed: HTTP first again
    assert memory.straight_to_browser("js") is False


def test_every_nth_page_of_a_learned_pattern_is_checked_over_http_again() -> None:
    memory = RenderMemory(learn=1, recheck=3, size=10)
    memory.observe("js", needed=True)
    assert [memory.straight_to_browser("js") for _ in range(7)] == [
        True,
        True,
        False,
        True,
        True,
        False,
        True,
    ]


def test_memory_is_bounded_least_recently_used_first() -> None:
    memory = RenderMemory(learn=1, recheck=0, size=2)
    memory.observe("a", needed=True)
    memory.observe("b", needed=True)
    assert memory.straight_to_browser("a")  # "a" used: "b" is now the oldest
    memory.observe("c", needed=True)
    assert len(memory) == 2
    assert memory.learned("a") and memory.learned("c") and not memory.learned("b")


@pytest.mark.parametrize(("learn", "recheck", "size"), [(0, 0, 1), (1, -1, 1), (1, 0, 0)])
def test_memory_refuses_nonsense_bounds(learn: int, recheck: int, size: int) -> None:
    with pytest.raises(ValueError, match="BROWSER_RENDER_AUTO_"):
        RenderMemory(learn=learn, recheck=recheck, size=size)


def test_request_takes_auto_and_refuses_other_values() -> None:
    request = Request("http://e.com/", render="auto")
    assert request.render == "auto"
    assert request.replace().render == "auto"
    assert decode_request(encode_request(request)).render == "auto"
    page = Response("http://e.com/", body=b"<a href='/x'>x</a>", request=request)
    assert page.follow("/x", render="auto").render == "auto"
    for bad in ("yes", "Auto", 1, None):
        with pytest.raises(TypeError, match="render must be True, False or 'auto'"):
            Request("http://e.com/", render=bad)  # type: ignore[arg-type]


def test_auto_goes_over_http_at_the_centre() -> None:
    assert wants_render(Request("http://e.com/", render="auto"), True) is False
    assert wants_render(Request("http://e.com/"), "auto") is False
    assert wants_render(Request("http://e.com/"), True) is True
    assert wants_render(Request("http://e.com/", render=True), "auto") is True


class Attr:
    def __init__(self, render: object) -> None:
        self.render = render


@pytest.mark.parametrize(
    ("spider", "setting", "mode"),
    [
        (None, False, False),
        (None, "auto", "auto"),
        (None, " AUTO ", "auto"),
        (None, "true", True),
        (None, "0", False),
        (Attr("auto"), True, "auto"),  # the spider's attribute wins
        (Attr(False), "auto", False),
    ],
)
def test_render_default_reads_the_spider_then_the_setting(
    spider: Any, setting: object, mode: object
) -> None:
    assert render_default(spider, setting) == mode


@pytest.mark.parametrize(
    ("spider", "setting"), [(None, "sometimes"), (Attr(2), False), (Attr("true"), False)]
)
def test_render_default_refuses_other_values(spider: Any, setting: object) -> None:
    with pytest.raises(ConfigError, match="must be True, False or 'auto'"):
        render_default(spider, setting)


class NoCheck:
    render = "auto"


class WithSelector:
    render = "auto"
    render_auto_selector = "h1"


@pytest.mark.parametrize(
    ("settings", "spider", "message"),
    [
        ({}, NoCheck(), "needs the spider's check"),
        ({"BROWSER_RENDER": "auto"}, None, "needs the spider's check"),
        ({"BROWSER_RENDER": "maybe"}, None, "BROWSER_RENDER must be"),
        ({"BROWSER_RENDER_AUTO_SELECTOR": "h1[", "BROWSER_RENDER": "auto"}, None, "bad CSS"),
        ({"BROWSER_RENDER_AUTO_LEARN": 0}, None, "BROWSER_RENDER_AUTO_LEARN must be"),
        ({"DOWNLOADER_MIDDLEWARES": OFF}, WithSelector(), "AutoRenderMiddleware is switched off"),
    ],
)
async def test_refused_at_start(
    make_downloader: MakeDownloader, settings: dict[str, Any], spider: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await make_downloader(settings, spider=spider)


async def test_the_setting_or_the_spider_turn_auto_on(make_downloader: MakeDownloader) -> None:
    by_setting = await make_downloader(
        {"BROWSER_RENDER": "auto", "BROWSER_RENDER_AUTO_SELECTOR": "h1"}
    )
    assert by_setting.middleware(AutoRenderMiddleware).default == "auto"
    by_spider = await make_downloader(spider=WithSelector())
    assert by_spider.middleware(AutoRenderMiddleware).default == "auto"


def static_site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info.get("n", "0"))
        links = "".join(f'<a href="/page/{i}">{i}</a>' for i in range(1, 4)) if n == 0 else ""
        return web.Response(
            text=f"<html><body><h1>Page {n}</h1>{links}</body></html>", content_type="text/html"
        )

    async def missing(request: web.Request) -> web.Response:
        return web.Response(
            status=404, text="<html><body>gone</body></html>", content_type="text/html"
        )

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/page/{n}", page)
    app.router.add_get("/gone", missing)
    return app


def site_spider(base: str, **attributes: Any) -> type[Spider]:
    class Site(Spider):
        name = "site"
        start_urls = [base + "/", base + "/gone"]
        custom_settings = {"HTTPERROR_ALLOWED_CODES": [404]}
        found: list[str] = []

        def parse(self, response: Response) -> Any:
            type(self).found.append(response.css("h1::text").get("") or str(response.status))
            yield from response.follow_all(css="a", callback=self.parse)

    for key, value in attributes.items():
        setattr(Site, key, value)
    Site.found = []
    return Site


async def test_a_static_site_never_starts_the_browser(serve: Any) -> None:
    base = await serve(static_site())
    checked: list[int] = []

    def needs_render(self: Spider, response: Response) -> bool:
        checked.append(response.status)
        return False

    spider = site_spider(base, render="auto", needs_render=needs_render)
    stats = await Crawler(spider, FAST).run()
    assert sorted(spider.found) == ["404", "Page 0", "Page 1", "Page 2", "Page 3"]
    assert checked == [200] * 4  # the 404 is not checked: it goes on as it is
    assert stats["render_auto/http_enough"] == 4
    assert stats.get("render_auto/rendered") is None
    assert not any(key.startswith("browser/") for key in stats)


@pytest.mark.parametrize(
    ("attributes", "settings", "message"),
    [
        ({}, {}, "needs the spider's check"),
        ({"render_auto_selector": "h1"}, {"DOWNLOADER_MIDDLEWARES": OFF}, "switched off"),
    ],
)
async def test_an_auto_request_that_cannot_be_honoured_fails_the_crawl(
    serve: Any, attributes: dict[str, Any], settings: dict[str, Any], message: str
) -> None:
    base = await serve(static_site())

    class OneAuto(Spider):
        name = "one-auto"

        def start_requests(self) -> Any:
            yield Request(base + "/", render="auto")

        def parse(self, response: Response) -> Any:
            yield {"url": response.url}

    for key, value in attributes.items():
        setattr(OneAuto, key, value)
    with pytest.raises(CrawlFailed, match=message):
        await Crawler(OneAuto, {**FAST, **settings}).run()


async def test_a_check_that_does_not_say_yes_or_no_fails_the_task(serve: Any) -> None:
    base = await serve(static_site())

    def needs_render(self: Spider, response: Response) -> Any:
        return "maybe"

    spider = site_spider(base, render="auto", needs_render=needs_render)
    stats = await Crawler(spider, FAST).run()
    assert spider.found == ["404"]
    assert stats["engine/unexpected_errors/TypeError"] == 1
