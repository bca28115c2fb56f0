"""The demo shop as an aiohttp.web application: no files on disk, the same bytes every run.

A small catalogue (a home page, 8 paginated categories, 300 products) plus the pages a
real crawler meets and must survive:

==============================  ==================================================
``/gift-cards``                 always 500 (linked from the menu): retried, then FAILED
``/product?id=999&lang=en``     404, a discontinued product still listed in Spices
``/products/<slug>.html``       301 to ``/product?id=…``: the old URL of one product
``/product?id=<latin1>``        ISO-8859-1, charset only in the Content-Type header
``/product?id=<meta_charset>``  windows-1251, charset only in a ``<meta charset>`` tag
``/product?id=<broken_html>``   badly broken markup that still holds its item
``/product?id=<slow>``          answers after ``SLOW_DELAY`` seconds
``/market``, ``/market/item``   built by JavaScript: empty over plain HTTP (``_market``)
``/cart``                       disallowed by ``/robots.txt``
``/_expected.json``             the ground truth: ``expected_items()``
==============================  ==================================================

Links to ``http://offsite.invalid/…``, ``mailto:`` and ``javascript:`` appear on every page.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import orjson
from aiohttp import web

from skitter.demo import _market, _pages
from skitter.demo._catalogue import Catalogue, catalogue
from skitter.demo._expected import expected_items

__all__ = ["SLOW_DELAY", "expected_items", "make_app", "serve_demo_site"]

SLOW_DELAY = 0.3
ROBOTS_TXT = """\
User-agent: *
Disallow: /cart
Disallow: /checkout
"""

_CATALOGUE: web.AppKey[Catalogue] = web.AppKey("catalogue", Catalogue)


def _html(text: str, *, charset: str | None = "utf-8", encoding: str = "utf-8") -> web.Response:
    """An HTML response. Characters the encoding lacks become character references,
    as a CMS writing a legacy encoding does, so every page decodes to the same text."""
    body = text.encode(encoding, "xmlcharrefreplace")
    return web.Response(body=body, content_type="text/html", charset=charset)


async def home(request: web.Request) -> web.Response:
    return _html(_pages.render_home(request.app[_CATALOGUE]))


async def category(request: web.Request) -> web.Response:
    cat = request.app[_CATALOGUE]
    found = cat.category(request.match_info["slug"])
    try:
        page = int(request.query.get("page", "1"))
    except ValueError:
        raise web.HTTPNotFound() from None
    if found is None or not 1 <= page <= found.page_count:
        raise web.HTTPNotFound()
    return _html(_pages.render_category(cat, found, page))


async def product(request: web.Request) -> web.Response:
    cat = request.app[_CATALOGUE]
    try:
        found = cat.products[int(request.query["id"])]
    except (KeyError, ValueError):
        raise web.HTTPNotFound() from None
    if found.id == cat.latin1:
        # The charset is named only by the header: the page has no <meta charset>.
        page = _pages.render_product(cat, found, charset=None)
        return _html(page, charset="ISO-8859-1", encoding="iso-8859-1")
    if found.id == cat.meta_charset:
        # The charset is named only by the page: the header says just text/html.
        page = _pages.render_product(cat, found, charset="windows-1251")
        return _html(page, charset=None, encoding="windows-1251")
    if found.id == cat.broken_html:
        return _html(_pages.render_broken_product(cat, found))
    if found.id == cat.slow:
        await asyncio.sleep(SLOW_DELAY)
    return _html(_pages.render_product(cat, found))


async def old_product_url(request: web.Request) -> web.Response:
    found = request.app[_CATALOGUE].by_slug(request.match_info["slug"])
    if found is None:
        raise web.HTTPNotFound()
    raise web.HTTPMovedPermanently(found.path)


async def market(request: web.Request) -> web.Response:
    return _html(_market.render_market(request.app[_CATALOGUE]))


async def market_item(request: web.Request) -> web.Response:
    try:
        pid = int(request.query["id"])
    except (KeyError, ValueError):
        raise web.HTTPNotFound() from None
    found = next((p for p in _market.market_products() if p.id == pid), None)
    if found is None:
        raise web.HTTPNotFound()
    return _html(_market.render_market_product(request.app[_CATALOGUE], found))


async def gift_cards(request: web.Request) -> web.Response:
    raise web.HTTPInternalServerError(text="Gift cards are temporarily unavailable.")


async def cart(request: web.Request) -> web.Response:
    return _html(_pages.render_cart(request.app[_CATALOGUE]))


async def robots_txt(request: web.Request) -> web.Response:
    return web.Response(text=ROBOTS_TXT, content_type="text/plain")


async def expected_json(request: web.Request) -> web.Response:
    return web.Response(body=orjson.dumps(expected_items()), content_type="application/json")


def make_app() -> web.Application:
    """The demo shop. Every instance serves the same pages."""
    app = web.Application()
    app[_CATALOGUE] = catalogue()
    app.router.add_get("/", home)
    app.router.add_get("/category/{slug}", category)
    app.router.add_get("/product", product)
    app.router.add_get("/products/{slug}.html", old_product_url)
    app.router.add_get(_market.MARKET_PATH, market)
    app.router.add_get(f"{_market.MARKET_PATH}/item", market_item)
    app.router.add_get("/gift-cards", gift_cards)
    app.router.add_get("/cart", cart)
    app.router.add_get("/robots.txt", robots_txt)
    app.router.add_get("/_expected.json", expected_json)
    return app


@asynccontextmanager
async def serve_demo_site(host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve the demo shop while the block runs; yields its base URL (no trailing slash).

    ``port=0`` picks a free port, so tests can run side by side.
    """
    runner = web.AppRunner(make_app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        if ":" in bound_host:
            bound_host = f"[{bound_host}]"
        yield f"http://{bound_host}:{bound_port}"
    finally:
        await runner.cleanup()
