"""The demo shop serves the same pages every time, and its awkward pages are awkward in
exactly the way the module docstring promises."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import orjson
import pytest
from protego import Protego

from skitter.demo import expected_items, serve_demo_site
from skitter.demo._catalogue import DISCONTINUED_ID, catalogue
from skitter.demo._pages import OFFSITE_URL
from skitter.http import Response

Fetch = Callable[..., Awaitable[Response]]


def _every_path() -> list[str]:
    cat = catalogue()
    paths = ["/", "/cart", "/robots.txt", "/_expected.json", "/gift-cards"]
    paths += [c.page_path(n) for c in cat.categories for n in range(1, c.page_count + 1)]
    paths += [p.path for p in cat.products.values()]
    paths.append(f"/product?id={DISCONTINUED_ID}&lang=en")
    return paths


async def test_expected_items_is_deterministic_and_one_item_per_product() -> None:
    # the market's JavaScript pages: tests/downloader/browser
    items = expected_items(rendered=False)
    assert items == expected_items(rendered=False)
    assert items is not expected_items(rendered=False)
    skus = [item["sku"] for item in items]
    assert len(skus) == len(set(skus)) == len(catalogue().products) == 300
    assert skus == sorted(skus)
    assert any("Café crème — 5 €" in item["description"] for item in items)
    assert {type(item["price"]) for item in items} == {float}


async def test_two_servers_serve_identical_pages(base_url: str, fetch: Fetch) -> None:
    async with serve_demo_site() as other_url:
        assert other_url != base_url

        async def both(path: str) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
            a, b = await asyncio.gather(fetch(base_url + path), fetch(other_url + path))
            return (a.status, a.body), (b.status, b.body)

        pairs = await asyncio.gather(*(both(path) for path in _every_path()))
    for path, (first, second) in zip(_every_path(), pairs, strict=True):
        assert first == second, path
    assert sum(status == 200 for (status, _), _ in pairs) == len(pairs) - 2


async def test_expected_json_is_the_ground_truth(base_url: str, fetch: Fetch) -> None:
    response = await fetch(f"{base_url}/_expected.json")
    assert response.headers["Content-Type"].startswith(b"application/json")
    assert orjson.loads(response.body) == expected_items()


async def test_robots_txt_disallows_the_basket_only(base_url: str, fetch: Fetch) -> None:
    response = await fetch(f"{base_url}/robots.txt")
    robots = Protego.parse(response.text)
    assert not robots.can_fetch(f"{base_url}/cart", "skitter")
    assert robots.can_fetch(f"{base_url}{catalogue().products[1].path}", "skitter")
    assert robots.can_fetch(f"{base_url}/category/tea", "skitter")
    assert (await fetch(f"{base_url}/cart")).status == 200  # disallowed, not missing


async def test_gift_cards_are_linked_from_every_menu_and_always_fail(
    base_url: str, fetch: Fetch
) -> None:
    home = await fetch(f"{base_url}/")
    assert "/gift-cards" in home.css("nav.menu a::attr(href)").getall()
    statuses = [(await fetch(f"{base_url}/gift-cards")).status for _ in range(3)]
    assert statuses == [500, 500, 500]


async def test_a_discontinued_product_is_listed_but_answers_404(
    base_url: str, fetch: Fetch
) -> None:
    spices = catalogue().category("spices")
    assert spices is not None
    page = 1 + spices.listing.index(DISCONTINUED_ID) // 12
    listing = await fetch(base_url + spices.page_path(page))
    link = f"/product?id={DISCONTINUED_ID}&lang=en"
    assert link in listing.css("article.product a.title::attr(href)").getall()
    assert (await fetch(base_url + link)).status == 404


async def test_the_old_product_url_redirects_permanently(base_url: str, fetch: Fetch) -> None:
    cat = catalogue()
    product = cat.products[cat.redirected]
    category = cat.category(product.category_slug)
    assert category is not None
    page = 1 + category.listing.index(product.id) // 12
    listing = await fetch(base_url + category.page_path(page))
    assert product.old_path in listing.css("a.title::attr(href)").getall()
    assert product.path not in listing.text

    moved = await fetch(base_url + product.old_path, allow_redirects=False)
    assert moved.status == 301
    assert moved.headers.text("Location") == product.path
    landed = await fetch(base_url + product.old_path)
    assert (landed.status, landed.url) == (200, base_url + product.path)
    assert (await fetch(f"{base_url}/products/no-such-thing.html")).status == 404


async def test_latin1_page_names_its_charset_only_in_the_header(
    base_url: str, fetch: Fetch
) -> None:
    product = catalogue().products[catalogue().latin1]
    response = await fetch(base_url + product.path)
    assert response.headers["Content-Type"] == b"text/html; charset=ISO-8859-1"
    assert b"charset" not in response.body.lower()
    with pytest.raises(UnicodeDecodeError):
        response.body.decode("utf-8")
    assert response.body.decode("iso-8859-1").count("crème brûlée") >= 2
    assert response.css("h1.name::text").get() == "Caramels à la crème brûlée"
    assert "— 5 € le sachet" in response.css(".description::text").get("")


async def test_meta_charset_page_names_its_charset_only_in_the_body(
    base_url: str, fetch: Fetch
) -> None:
    product = catalogue().products[catalogue().meta_charset]
    response = await fetch(base_url + product.path)
    assert response.headers["Content-Type"] == b"text/html"
    assert b'<meta charset="windows-1251">' in response.body[:200]
    with pytest.raises(UnicodeDecodeError):
        response.body.decode("utf-8")
    # Windows-1252, the fallback for undeclared bytes, would read this as mojibake.
    assert "Иван-чай" not in response.body.decode("cp1252", "replace")
    assert response.css("h1.name::text").get() == "Иван-чай (Ivan-chai) — fireweed tea"


async def test_broken_html_page_is_broken(base_url: str, fetch: Fetch) -> None:
    product = catalogue().products[catalogue().broken_html]
    response = await fetch(base_url + product.path)
    text = response.text
    assert response.status == 200
    assert "</html>" not in text
    assert "<!DOCTYPE" not in text
    assert f"<h1 class=name>{product.name}</h2>" in text
    assert "</div></div></span>" in text


async def test_every_page_has_offsite_mailto_and_javascript_links(
    base_url: str, fetch: Fetch
) -> None:
    cat = catalogue()
    for path in ("/", "/category/tea", cat.products[1].path):
        hrefs = (await fetch(base_url + path)).css("a::attr(href)").getall()
        assert OFFSITE_URL in hrefs, path
        assert any(h.startswith("mailto:") for h in hrefs), path
        assert any(h.startswith("javascript:") for h in hrefs), path


@pytest.mark.parametrize(
    "path",
    ["/category/tea?page=99", "/category/tea?page=x", "/category/nope", "/product?id=x"],
)
async def test_pages_out_of_range_answer_404(base_url: str, fetch: Fetch, path: str) -> None:
    assert (await fetch(base_url + path)).status == 404


async def test_pagination_writes_one_page_under_several_urls(base_url: str, fetch: Fetch) -> None:
    first = await fetch(f"{base_url}/category/tea")
    nxt = first.css("nav.pagination a.next::attr(href)").get()
    numbered = first.css("nav.pagination a::attr(href)").getall()
    assert nxt == "/category/tea?sort=popular&page=2"
    assert "/category/tea?page=2&sort=popular" in numbered
    a, b = await asyncio.gather(
        fetch(base_url + nxt), fetch(f"{base_url}/category/tea?page=2&sort=popular")
    )
    assert a.body == b.body
    assert (await fetch(f"{base_url}/category/tea?page=1")).body == first.body
