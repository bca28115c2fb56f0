"""``render="auto"`` in whole crawls with real Chromium: a shop whose product pages are
static and whose review pages build their content with JavaScript. Only the review
pages are rendered; once their URL pattern is learned they skip the HTTP try (counted
at the server); every item is complete."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.testing._server import serve_app

from .conftest import _html

FAST = {"RETRY_DELAYS": [0.0], "DOWNLOAD_TIMEOUT": 10.0, "LOG_LEVEL": "WARNING"}
PRODUCTS = 3
REVIEWS = 6


class MixedSite:
    """``/`` links to the static products and to the first review; each review page
    (built by JavaScript) links statically to the next. ``http`` and ``browser`` count
    the page requests of each kind: Chromium's navigations send ``Sec-Fetch-Mode``,
    aiohttp does not."""

    def __init__(self) -> None:
        self.http: Counter[str] = Counter()
        self.browser: Counter[str] = Counter()
        self.app = web.Application()
        self.app.router.add_get("/", self.home)
        self.app.router.add_get("/product/{n}", self.product)
        self.app.router.add_get("/reviews/{n}", self.review)
        self.app.router.add_get("/tagged", self.tagged)

    def _count(self, request: web.Request, kind: str) -> None:
        by = self.browser if "Sec-Fetch-Mode" in request.headers else self.http
        by[kind] += 1

    async def home(self, request: web.Request) -> web.Response:
        self._count(request, "home")
        links = "".join(f'<a class="p" href="/product/{n}">p{n}</a>' for n in range(1, 4))
        return _html(f'{links}<a class="r" href="/reviews/1">reviews</a><h1 class="name">Home</h1>')

    async def product(self, request: web.Request) -> web.Response:
        self._count(request, "product")
        n = int(request.match_info["n"])
        return _html(f'<h1 class="name">Product {n}</h1>')

    async def review(self, request: web.Request) -> web.Response:
        self._count(request, "review")
        n = int(request.match_info["n"])
        following = f'<a class="r" href="/reviews/{n + 1}">next</a>' if n < REVIEWS else ""
        script = (
            "const h = document.createElement('h1'); h.className = 'name';"
            f"h.textContent = 'Review {n}'; document.body.appendChild(h);"
        )
        return _html(f"{following}<script>{script}</script>")

    async def tagged(self, request: web.Request) -> web.Response:
        """A JavaScript page with an ETag, answering 304 to a request that has it."""
        self._count(request, "tagged")
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        response = _html("<script>document.body.innerHTML = '<h1 class=name>Tagged</h1>';</script>")
        response.headers["ETag"] = '"v1"'
        return response


@pytest.fixture
async def mixed(chromium: None) -> AsyncIterator[tuple[MixedSite, str]]:
    site = MixedSite()
    async with serve_app(site.app) as base:
        yield site, base


def shop_spider(base: str, follow: dict[str, Any] | None = None, **attributes: Any) -> type[Spider]:
    """Products and the chain of reviews; one item (the page's h1) per page. ``follow``:
    keyword arguments of every request (``render="auto"``, say)."""
    options = follow or {}

    class Shop(Spider):
        name = "shop"
        found: list[dict[str, Any]] = []

        def start_requests(self) -> Any:
            yield Request(base + "/", **options)

        def parse(self, response: Response) -> Any:
            for href in response.css("a.p::attr(href), a.r::attr(href)").getall():
                yield response.follow(href, self.parse_page, **options)

        def parse_page(self, response: Response) -> Any:
            item = {
                "name": response.css("h1.name::text").get(),
                "rendered": "rendered" in response.flags,
            }
            type(self).found.append(item)
            yield item
            for href in response.css("a.r::attr(href)").getall():
                yield response.follow(href, self.parse_page, **options)

    for key, value in attributes.items():
        setattr(Shop, key, value)
    Shop.found = []
    return Shop


EXPECTED = sorted(
    [f"Product {n}" for n in range(1, PRODUCTS + 1)]
    + [f"Review {n}" for n in range(1, REVIEWS + 1)]
)


async def test_auto_renders_only_the_javascript_pages_and_learns_their_pattern(
    mixed: tuple[MixedSite, str],
) -> None:
    site, base = mixed
    spider = shop_spider(base, render="auto", render_auto_selector="h1.name")
    stats = await Crawler(spider, FAST).run()
    assert sorted(item["name"] for item in spider.found) == EXPECTED
    assert all(item["rendered"] == item["name"].startswith("Review") for item in spider.found)
    # Static pages: HTTP only. Reviews: the first two tried over HTTP (LEARN = 2), then
    # straight to the browser; every review rendered once.
    assert site.http == Counter(home=1, product=PRODUCTS, review=2)
    assert site.browser == Counter(review=REVIEWS)
    assert stats["render_auto/http_enough"] == 1 + PRODUCTS
    assert stats["render_auto/rendered"] == 2
    assert stats["render_auto/skipped_http"] == REVIEWS - 2
    assert stats["render_auto/patterns_learned"] == 1
    assert stats["browser/page_count"] == REVIEWS
    assert stats["item_scraped_count"] == PRODUCTS + REVIEWS


async def test_per_request_auto_with_an_async_check_and_rechecks(
    mixed: tuple[MixedSite, str],
) -> None:
    site, base = mixed
    checked: list[str] = []

    async def needs_render(self: Spider, response: Response) -> bool:
        checked.append(response.url.removeprefix(base))
        return not response.css("h1.name")

    shop = shop_spider(base, {"render": "auto"}, needs_render=needs_render)
    settings = {**FAST, "BROWSER_RENDER_AUTO_LEARN": 1, "BROWSER_RENDER_AUTO_RECHECK": 2}
    stats = await Crawler(shop, settings).run()
    assert sorted(item["name"] for item in shop.found) == EXPECTED
    # LEARN = 1: review 1 teaches the pattern; RECHECK = 2: every 2nd page after
    # that (reviews 3 and 5) is tried over HTTP again.
    assert site.http["review"] == 3
    assert site.browser == Counter(review=REVIEWS)
    assert sorted(u for u in checked if u.startswith("/reviews")) == [
        "/reviews/1",
        "/reviews/3",
        "/reviews/5",
    ]
    assert stats["render_auto/skipped_http"] == REVIEWS - 3


async def test_with_the_http_cache_the_callback_still_gets_rendered_pages(
    mixed: tuple[MixedSite, str], tmp_path: Any
) -> None:
    site, base = mixed
    settings = {**FAST, "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "cache")}
    for run in (1, 2):
        spider = shop_spider(base, render="auto", render_auto_selector="h1.name")
        stats = await Crawler(spider, settings).run()
        assert sorted(item["name"] for item in spider.found) == EXPECTED, run
    # The second run took every HTTP page from the cache, and rendered the reviews again.
    assert stats["httpcache/hit"] == 1 + PRODUCTS + 2
    assert site.browser == Counter(review=2 * REVIEWS)


async def test_a_recrawlable_page_is_rendered_whole_not_as_a_304(
    mixed: tuple[MixedSite, str], downloader: Any
) -> None:
    # The HTTP attempt stores the page's ETag (RECRAWL_CONDITIONAL); the browser's
    # navigation must not send it back, or the "rendered" page would be an empty 304.
    site, base = mixed

    class Recrawl(Spider):
        name = "recrawl"
        render_auto_selector = "h1.name"

    dl = await downloader({}, Recrawl())
    response = await dl.fetch(Request(base + "/tagged", render="auto", age=3600))
    assert response.status == 200
    assert response.css("h1.name::text").get() == "Tagged"
    assert "rendered" in response.flags
    assert site.http["tagged"] == site.browser["tagged"] == 1
