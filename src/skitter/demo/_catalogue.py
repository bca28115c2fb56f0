"""The demo shop's catalogue: categories, products and the awkward cases, built from a seed.

Everything the demo site serves is derived from this one immutable model, so the site
and its ground truth (``expected_items()``) cannot drift apart: the item a correct
crawl extracts from a product page is exactly ``Product.item()``. The model is built
once per process with a fixed seed, so every run and every server serves the same bytes.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from skitter.demo._vocabulary import CATEGORIES, CLOSERS, OPENERS, TAGS

__all__ = [
    "DISCONTINUED_ID",
    "PAGE_SIZE",
    "SEED",
    "Catalogue",
    "Category",
    "Product",
    "catalogue",
    "expected_items",
]

SEED = 20240601
PRODUCT_COUNT = 300
PAGE_SIZE = 12
CROSS_LISTED_SHARE = 0.2
RELATED_COUNT = 4
#: The id of a product that a category page still lists but the shop has removed (404).
DISCONTINUED_ID = 999


@dataclass(frozen=True, slots=True)
class Category:
    slug: str
    name: str
    #: Products listed on this category's pages, in listing order (includes cross-listings).
    listing: tuple[int, ...] = ()

    @property
    def path(self) -> str:
        return f"/category/{self.slug}"

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.listing) // PAGE_SIZE))

    def page_path(self, page: int) -> str:
        """Page 1 is the bare category URL; later pages carry ``page`` and ``sort``."""
        return self.path if page == 1 else f"{self.path}?page={page}&sort=popular"


@dataclass(frozen=True, slots=True)
class Product:
    id: int
    slug: str
    name: str
    sku: str
    price_cents: int
    category: str  # the primary category's display name
    category_slug: str
    rating: float
    reviews: int
    description: str
    tags: tuple[str, ...]
    related: tuple[int, ...] = ()

    @property
    def path(self) -> str:
        return f"/product?id={self.id}&lang=en"

    @property
    def old_path(self) -> str:
        """The URL the product had before the shop moved to ``/product?id=``."""
        return f"/products/{self.slug}.html"

    @property
    def price(self) -> float:
        return self.price_cents / 100

    def item(self) -> dict[str, Any]:
        """The item the demo spider extracts from this product's page."""
        return {
            "name": self.name,
            "sku": self.sku,
            "price": self.price,
            "category": self.category,
            "rating": self.rating,
            "description": self.description,
            "tags": list(self.tags),
        }


@dataclass(frozen=True, slots=True)
class Catalogue:
    categories: tuple[Category, ...]
    products: Mapping[int, Product]
    featured: tuple[int, ...]
    # The awkward product pages a real crawler meets; each is a product id.
    redirected: int  # linked only by its old URL, which answers 301
    latin1: int  # ISO-8859-1, charset only in the Content-Type header
    meta_charset: int  # windows-1251, charset only in a <meta> tag
    broken_html: int  # badly broken markup that still holds the item
    slow: int  # answers after a delay

    def category(self, slug: str) -> Category | None:
        return next((c for c in self.categories if c.slug == slug), None)

    def by_slug(self, slug: str) -> Product | None:
        return next((p for p in self.products.values() if p.slug == slug), None)


def _slugify(text: str) -> str:
    table = str.maketrans("éèêëàâäçôöûüîïñ", "eeeeaaacoouuiin")
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in text.lower().translate(table))
    return "-".join(part for part in cleaned.split("-") if part.isascii() and part)


def _build(seed: int) -> Catalogue:
    rng = random.Random(seed)
    per_category = [PRODUCT_COUNT // len(CATEGORIES)] * len(CATEGORIES)
    for i in range(PRODUCT_COUNT % len(CATEGORIES)):
        per_category[i] += 1

    products: dict[int, Product] = {}
    primary: dict[str, list[int]] = {}
    next_id = 1
    for (slug, cat_name, prefix, nouns, qualifiers), count in zip(
        CATEGORIES, per_category, strict=True
    ):
        names = rng.sample([f"{n} — {q}" for n in nouns for q in qualifiers], count)
        primary[slug] = []
        for name in names:
            pid = next_id
            next_id += 1
            description = f"{rng.choice(OPENERS)} {rng.choice(CLOSERS)}"
            products[pid] = Product(
                id=pid,
                slug=f"{_slugify(name)}-{pid}",
                name=name,
                sku=f"{prefix}-{pid:04d}",
                price_cents=rng.randrange(250, 8900, 5),
                category=cat_name,
                category_slug=slug,
                rating=rng.randrange(5, 11) / 2,
                reviews=rng.randrange(0, 240),
                description=description,
                tags=tuple(rng.sample(TAGS, rng.randint(1, 4))),
            )
            primary[slug].append(pid)

    redirected = primary["chocolate"][0]
    latin1 = primary["patisserie"][0]
    meta_charset = primary["tea"][0]
    broken_html = primary["cheese"][0]
    slow = primary["books"][0]
    # Two pages get text of their own, written for the encoding they are served in.
    products[latin1] = replace(
        products[latin1],
        name="Caramels à la crème brûlée",
        slug=f"caramels-a-la-creme-brulee-{latin1}",
        description="Caramels façon grand-mère, fondants et dorés — 5 € le sachet de 150 g.",
    )
    products[meta_charset] = replace(
        products[meta_charset],
        name="Иван-чай (Ivan-chai) — fireweed tea",
        slug=f"ivan-chai-fireweed-tea-{meta_charset}",
        description="Ферментированный иван-чай из Карелии — заваривать при 95 °C, 5 минут.",
    )

    # Cross-listings and related links make most products reachable several ways. The
    # redirected product stays out of both: it is reachable only through its old URL.
    linkable = [pid for pid in products if pid != redirected]
    listings: dict[str, list[int]] = {slug: list(ids) for slug, ids in primary.items()}
    slugs = list(listings)
    for pid in rng.sample(linkable, int(len(linkable) * CROSS_LISTED_SHARE)):
        other = rng.choice([s for s in slugs if s != products[pid].category_slug])
        listings[other].append(pid)
    listings["spices"].append(DISCONTINUED_ID)
    for ids in listings.values():
        rng.shuffle(ids)

    for pid, product in products.items():
        pool = [p for p in primary[product.category_slug] if p not in (pid, redirected)]
        extra = [p for p in linkable if p != pid and p not in pool]
        related = rng.sample(pool, RELATED_COUNT - 1) + rng.sample(extra, 1)
        products[pid] = replace(product, related=tuple(related))

    categories = tuple(
        Category(slug=slug, name=name, listing=tuple(listings[slug]))
        for slug, name, *_ in CATEGORIES
    )
    return Catalogue(
        categories=categories,
        products=MappingProxyType(products),
        featured=tuple(rng.sample(linkable, 8)),
        redirected=redirected,
        latin1=latin1,
        meta_charset=meta_charset,
        broken_html=broken_html,
        slow=slow,
    )


@functools.cache
def catalogue() -> Catalogue:
    """The demo shop's catalogue (built once, from ``SEED``)."""
    return _build(SEED)


def expected_items(*, rendered: bool | None = None) -> list[dict[str, Any]]:
    """Every item a correct crawl of the demo site extracts, ordered by SKU.

    Each product page yields exactly one item and every product is reachable from the
    home page, so this is one item per product. The market's products (``_market``) are
    included when ``rendered``: their pages are built by JavaScript, so only a crawl
    that renders them finds them. ``None`` means "if this machine can render" (Playwright
    and Chromium installed), which is what ``DemoSpider`` does. A fresh list of fresh
    dicts each call.
    """
    products = list(catalogue().products.values())
    if rendered is None:
        from skitter.downloader.browser import browser_problem

        rendered = browser_problem() is None
    if rendered:
        from skitter.demo._market import market_products

        products += market_products()
    return [p.item() for p in sorted(products, key=lambda p: p.sku)]
