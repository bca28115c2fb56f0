"""The demo shop's "Marché du jour": pages that exist only once their JavaScript runs.

Like many shops built on a front-end framework, the market listing and its product
pages are served as an empty shell plus data in a ``<script type="application/json">``;
the browser builds the product cards and details from it. Over plain HTTP a crawler sees
no product at all; rendered (``Request(..., render=True)``), the product pages have the
same markup as the rest of the shop, so ``DemoSpider.parse_product`` reads them as is.
"""

# ruff: noqa: RUF001

from __future__ import annotations

from html import escape

import orjson

from skitter.demo._catalogue import Catalogue, Product
from skitter.demo._pages import _layout, _price, _stars

__all__ = ["MARKET_CATEGORY", "MARKET_PATH", "market_path", "market_products", "render_market"]

MARKET_PATH = "/market"
MARKET_CATEGORY = "Marché du jour"

_MARKET: tuple[Product, ...] = tuple(
    Product(
        id=pid,
        slug=slug,
        name=name,
        sku=f"MKT-{pid:04d}",
        price_cents=price,
        category=MARKET_CATEGORY,
        category_slug="market",
        rating=rating,
        reviews=reviews,
        description=description,
        tags=tags,
    )
    for pid, slug, name, price, rating, reviews, description, tags in (
        (
            901,
            "fraises-de-plougastel",
            "Fraises de Plougastel",
            690,
            5.0,
            41,
            "Picked this morning in Brittany; 500 g, sold until noon.",
            ("seasonal", "fruit"),
        ),
        (
            902,
            "asperges-blanches",
            "Asperges blanches des Landes",
            1150,
            4.5,
            17,
            "A bunch of 1 kg, thick white spears, to peel and boil 12 minutes.",
            ("seasonal", "vegetable", "local"),
        ),
        (
            903,
            "chevre-frais",
            "Chèvre frais du marché",
            420,
            4.0,
            9,
            "A fresh goat cheese, made two days ago; eat it this week.",
            ("cheese",),
        ),
    )
)


def market_products() -> tuple[Product, ...]:
    """The products sold at the market, each on a JavaScript-built page."""
    return _MARKET


def market_path(product: Product) -> str:
    return f"{MARKET_PATH}/item?id={product.id}"


def _data_script(data: object) -> str:
    # "</" inside a script element would end it; JSON allows "<\/" for "</".
    text = orjson.dumps(data).decode().replace("</", "<\\/")
    return f'<script type="application/json" id="data">{text}</script>\n'


_BUILD_CARDS = """<script>
document.addEventListener("DOMContentLoaded", () => {
  const data = JSON.parse(document.getElementById("data").textContent);
  const section = document.querySelector("section.market");
  for (const p of data) {
    const card = document.createElement("article");
    card.className = "product";
    card.innerHTML = '<h2><a class="title"></a></h2><p class="price"></p>';
    card.querySelector("a.title").href = p.path;
    card.querySelector("a.title").textContent = p.name;
    card.querySelector("p.price").textContent = p.price;
    section.appendChild(card);
  }
});
</script>
"""

_BUILD_DETAIL = """<script>
document.addEventListener("DOMContentLoaded", () => {
  const p = JSON.parse(document.getElementById("data").textContent);
  const article = document.querySelector("article.product-detail");
  const add = (tag, cls, text) => {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    if (text !== undefined) el.textContent = text;
    article.appendChild(el);
    return el;
  };
  add("h1", "name", p.name);
  add("p", "sku", p.sku);
  const price = document.createElement("span");
  price.setAttribute("itemprop", "price");
  price.setAttribute("content", p.price);
  price.textContent = p.price_text;
  add("p", "price").appendChild(price);
  add("p", "rating", p.stars).dataset.rating = p.rating;
  add("p", "description", p.description);
  const tags = add("ul", "tags");
  for (const t of p.tags) {
    const li = document.createElement("li");
    li.textContent = t;
    tags.appendChild(li);
  }
});
</script>
"""


def render_market(cat: Catalogue) -> str:
    """The listing: an empty section, filled by JavaScript from the embedded data."""
    cards = [
        {"path": market_path(p), "name": p.name, "price": _price(p.price_cents)} for p in _MARKET
    ]
    main = (
        f"<h1>{escape(MARKET_CATEGORY)}</h1>\n"
        '<section class="market"><noscript>Enable JavaScript to see today’s market.'
        "</noscript></section>\n" + _data_script(cards) + _BUILD_CARDS
    )
    return _layout(cat, MARKET_CATEGORY, main)


def render_market_product(cat: Catalogue, product: Product) -> str:
    """A market product: breadcrumb in the HTML, the details built by JavaScript."""
    data = {
        "name": product.name,
        "sku": product.sku,
        "price": f"{product.price:.2f}",
        "price_text": _price(product.price_cents),
        "rating": str(product.rating),
        "stars": _stars(product.rating),
        "description": product.description,
        "tags": list(product.tags),
    }
    main = (
        f'<nav class="breadcrumb"><a href="/">Home</a> › '
        f'<a href="{MARKET_PATH}">{escape(MARKET_CATEGORY)}</a></nav>\n'
        '<article class="product-detail"></article>\n' + _data_script(data) + _BUILD_DETAIL
    )
    return _layout(cat, product.name, main)
