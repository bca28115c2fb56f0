"""DemoSpider's callbacks, run on real pages from the served demo shop, extract exactly
the published ground truth. (The end-to-end crawl through the engine is tested elsewhere.)"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from skitter.demo import DemoSpider, expected_items
from skitter.demo._catalogue import catalogue
from skitter.demo._pages import OFFSITE_URL
from skitter.http import Request, Response, url_host

Fetch = Callable[..., Awaitable[Response]]


def _run(
    callback: Callable[[Response], Any], response: Response
) -> tuple[list[dict], list[Request]]:
    items: list[dict] = []
    requests: list[Request] = []
    for out in callback(response):
        (items if isinstance(out, dict) else requests).append(out)
    return items, requests


def test_spider_needs_the_site_url() -> None:
    with pytest.raises(ValueError, match="start_url"):
        DemoSpider()


@pytest.mark.parametrize("kwarg", ["start_url", "base_url"])
def test_spider_takes_the_site_url_and_stays_on_its_host(kwarg: str) -> None:
    spider = DemoSpider(**{kwarg: "http://127.0.0.1:8123/"})
    assert spider.name == "demo"
    assert list(spider.start_urls) == ["http://127.0.0.1:8123/"]
    assert list(spider.allowed_domains) == ["127.0.0.1"]
    assert [r.url for r in spider.start_requests()] == ["http://127.0.0.1:8123/"]


async def test_parse_product_gives_the_expected_item_for_every_product(
    base_url: str, fetch: Fetch
) -> None:
    spider = DemoSpider(start_url=base_url)
    products = sorted(catalogue().products.values(), key=lambda p: p.sku)
    responses = await asyncio.gather(*(fetch(base_url + p.path) for p in products))
    extracted = []
    for response in responses:
        items, _ = _run(spider.parse_product, response)
        assert len(items) == 1, response.url
        extracted.append(items[0])
    assert extracted == expected_items(rendered=False)  # the catalogue, served as HTML


@pytest.mark.parametrize("which", ["latin1", "meta_charset", "broken_html", "slow", "redirected"])
async def test_awkward_product_pages_still_give_their_item(
    base_url: str, fetch: Fetch, which: str
) -> None:
    cat = catalogue()
    product = cat.products[getattr(cat, which)]
    url = base_url + (product.old_path if which == "redirected" else product.path)
    response = await fetch(url)
    items, requests = _run(DemoSpider(start_url=base_url).parse_product, response)
    assert items == [product.item()]
    assert {r.url for r in requests} >= {base_url + cat.products[product.related[0]].path}


async def test_parse_follows_menu_pagination_and_products_over_http_only(
    base_url: str, fetch: Fetch
) -> None:
    spider = DemoSpider(start_url=base_url)
    home = await fetch(base_url + "/")
    tea = await fetch(base_url + "/category/tea")
    _, from_home = _run(spider.parse, home)
    items, from_tea = _run(spider.parse, tea)
    assert items == []

    urls = {r.url for r in from_home + from_tea}
    assert all(u.startswith("http://") for u in urls)
    assert OFFSITE_URL in urls  # yielded; the engine's offsite filter drops it
    assert url_host(OFFSITE_URL) not in spider.allowed_domains
    assert base_url + "/gift-cards" in urls
    assert base_url + "/category/tea?sort=popular&page=2" in urls
    product_callbacks = {
        r.callback for r in from_home + from_tea if "/product" in r.url and "#" not in r.url
    }
    assert product_callbacks == {spider.parse_product}
    assert {r.callback for r in from_tea if "/category/" in r.url} == {None}


async def test_a_crawl_through_the_callbacks_extracts_exactly_the_expected_items(
    base_url: str, fetch: Fetch
) -> None:
    """Breadth-first over the site as an engine would: drop off-site and duplicate
    requests, pass only 200s to callbacks. Every product is reachable, once."""
    spider = DemoSpider(start_url=base_url + "/")
    seen: set[bytes] = set()
    statuses: Counter[int] = Counter()
    offsite: set[str] = set()
    items: list[dict] = []
    frontier = list(spider.start_requests())
    while frontier:
        responses = await asyncio.gather(*(fetch(r) for r in frontier))
        frontier = []
        for response in responses:
            statuses[response.status] += 1
            if response.status != 200:
                continue
            new_items, requests = _run(response.request.callback or spider.parse, response)
            items += new_items
            for request in requests:
                if url_host(request.url) not in spider.allowed_domains:
                    offsite.add(request.url)
                elif request.fingerprint not in seen:
                    seen.add(request.fingerprint)
                    frontier.append(request)

    # Fetched over plain HTTP, the market's JavaScript pages hold no product.
    assert sorted(items, key=lambda item: item["sku"]) == expected_items(rendered=False)
    assert statuses == {200: len(seen) - 1, 404: 1, 500: 1}  # the start URL is not in seen
    assert offsite == {OFFSITE_URL}
