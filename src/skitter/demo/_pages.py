"""HTML for the demo shop's pages, rendered from the catalogue as plain strings.

The markup is what a small real shop serves: a menu on every page, paginated category
listings whose product cards hold several links to one product (title, ``#reviews``, a
``javascript:`` basket button), related products linked with their query parameters in
another order, and a footer with ``mailto:`` and off-site links. Each function returns
``str``; the site encodes it (UTF-8 except for the pages that test encodings). The
typographic quotes and arrows are wanted, hence the file-wide RUF001 exemption.
"""

# ruff: noqa: RUF001

from __future__ import annotations

from html import escape

from skitter.demo._catalogue import PAGE_SIZE, Catalogue, Category, Product

__all__ = [
    "OFFSITE_URL",
    "render_broken_product",
    "render_cart",
    "render_category",
    "render_home",
    "render_product",
]

SHOP = "Épicerie Skitter"
OFFSITE_URL = "http://offsite.invalid/partners?from=skitter"
_CURRENT = ' class="current"'
CONTACT = "mailto:bonjour@epicerie.example?subject=Question"


def _price(cents: int) -> str:
    return f"{cents // 100},{cents % 100:02d} €"


def _stars(rating: float) -> str:
    return "★" * int(rating) + ("½" if rating % 1 else "")


def _menu(cat: Catalogue) -> str:
    links = "".join(f'<a href="{c.path}">{escape(c.name)}</a>' for c in cat.categories)
    # The market is built by JavaScript, gift cards always fail (500), the partner shop
    # is off-site, contact is a mailto:.
    return (
        f'<nav class="menu">{links}'
        '<a class="js" href="/market">Marché du jour</a>'
        '<a href="/gift-cards">Gift cards</a>'
        '<a href="/cart" rel="nofollow">Basket</a>'
        f'<a href="{escape(OFFSITE_URL)}">Partner shops</a>'
        f'<a href="{escape(CONTACT)}">Contact</a></nav>'
    )


def _layout(cat: Catalogue, title: str, main: str, *, charset: str | None = "utf-8") -> str:
    meta = f'<meta charset="{charset}">\n' if charset else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n'
        f"{meta}"
        f"<title>{escape(title)} — {SHOP}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "</head>\n<body>\n"
        f'<header><a class="logo" href="/">{SHOP}</a>\n{_menu(cat)}</header>\n'
        f"<main>\n{main}</main>\n"
        "<footer><p>© 2024 Épicerie Skitter · 12 rue des Halles, Lyon · "
        f'<a href="{escape(CONTACT)}">bonjour@epicerie.example</a> · '
        '<a href="javascript:window.print()">Print this page</a></p></footer>\n'
        "</body>\n</html>\n"
    )


def _card(cat: Catalogue, pid: int) -> str:
    """A product card in a listing: three links to one product, one of them javascript:."""
    product = cat.products.get(pid)
    if product is None:  # listed, but removed from the shop: its link answers 404
        path, name, price, rating, reviews = (
            f"/product?id={pid}&lang=en",
            "Saffron — discontinued",
            "—",
            0.0,
            0,
        )
    else:
        path = product.old_path if pid == cat.redirected else product.path
        name, price = product.name, _price(product.price_cents)
        rating, reviews = product.rating, product.reviews
    href = escape(path)
    return (
        '<article class="product">\n'
        f'  <h2><a class="title" href="{href}">{escape(name)}</a></h2>\n'
        f'  <p class="price">{price}</p>\n'
        f'  <a class="reviews" href="{href}#reviews">{_stars(rating)} ({reviews})</a>\n'
        f'  <a class="add" href="javascript:addToBasket({pid})">Add to basket</a>\n'
        "</article>\n"
    )


def render_home(cat: Catalogue) -> str:
    cards = "".join(_card(cat, pid) for pid in cat.featured)
    categories = "".join(
        f'<li><a href="{c.path}">{escape(c.name)}</a> ({len(c.listing)})</li>'
        for c in cat.categories
    )
    main = (
        f"<h1>Bienvenue chez {SHOP}</h1>\n"
        f'<ul class="categories">{categories}</ul>\n'
        f'<section class="featured"><h2>This week’s picks</h2>\n{cards}</section>\n'
    )
    return _layout(cat, "Home", main)


def render_category(cat: Catalogue, category: Category, page: int) -> str:
    ids = category.listing[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    cards = "".join(_card(cat, pid) for pid in ids)
    last = category.page_count
    # Page 1's "previous" is a disabled javascript: link; "next" lists its query
    # parameters in another order than the numbered links: same page, other URL.
    prev = (
        '<a class="prev" href="javascript:void(0)" aria-disabled="true">‹ Previous</a>'
        if page == 1
        else f'<a class="prev" href="{escape(category.page_path(page - 1))}">‹ Previous</a>'
    )
    numbers = "".join(
        f'<a href="{escape(category.page_path(n))}"{_CURRENT if n == page else ""}>{n}</a>'
        for n in range(1, last + 1)
    )
    following = (
        f'<a class="next" href="{category.path}?sort=popular&amp;page={page + 1}">Next ›</a>'
        if page < last
        else ""
    )
    main = (
        f'<nav class="breadcrumb"><a href="/">Home</a> › {escape(category.name)}</nav>\n'
        f"<h1>{escape(category.name)}</h1>\n"
        f'<p class="count">{len(category.listing)} products · page {page} of {last}</p>\n'
        f'<div class="listing">\n{cards}</div>\n'
        f'<nav class="pagination">{prev}{numbers}{following}</nav>\n'
    )
    return _layout(cat, f"{category.name} (page {page})", main)


def _related(cat: Catalogue, product: Product) -> str:
    links = []
    for n, pid in enumerate(product.related):
        other = cat.products[pid]
        # The same product URL written three ways; all canonicalize to ``other.path``.
        href = (other.path, f"/product?lang=en&id={pid}", f"{other.path}#details")[n % 3]
        links.append(f'<li><a href="{escape(href)}">{escape(other.name)}</a></li>')
    return f'<aside class="related"><h2>Related products</h2><ul>{"".join(links)}</ul></aside>\n'


def render_product(cat: Catalogue, product: Product, *, charset: str | None = "utf-8") -> str:
    """A product page; ``charset=None`` leaves the <meta charset> out."""
    tags = "".join(f"<li>{escape(t)}</li>" for t in product.tags)
    main = (
        f'<nav class="breadcrumb"><a href="/">Home</a> › '
        f'<a href="/category/{product.category_slug}">{escape(product.category)}</a></nav>\n'
        '<article class="product-detail">\n'
        f'  <h1 class="name">{escape(product.name)}</h1>\n'
        f'  <p class="sku">{product.sku}</p>\n'
        f'  <p class="price"><span itemprop="price" content="{product.price:.2f}">'
        f"{_price(product.price_cents)}</span></p>\n"
        f'  <p class="rating" data-rating="{product.rating}">{_stars(product.rating)} '
        f'<a href="#reviews">({product.reviews} reviews)</a></p>\n'
        f'  <p class="description">{escape(product.description)}</p>\n'
        f'  <ul class="tags">{tags}</ul>\n'
        f'  <a class="add" href="javascript:addToBasket({product.id})">Add to basket</a>\n'
        "</article>\n"
        f"{_related(cat, product)}"
        f'<section id="reviews"><h2>Reviews</h2><p>{product.reviews} reviews.</p></section>\n'
    )
    return _layout(cat, product.name, main, charset=charset)


def render_broken_product(cat: Catalogue, product: Product) -> str:
    """A product page as a careless template writes it: unquoted attributes, unclosed
    and mis-nested tags, stray end tags, a bare ``&`` and no ``</body></html>``. Every
    field must still be where the spider's selectors look for it."""
    tags = "".join(f"<li>{escape(t)}" for t in product.tags)  # no </li>
    related = "".join(
        f"<li><a href={escape(cat.products[pid].path)}>{escape(cat.products[pid].name)}</a>"
        for pid in product.related
    )
    return (
        f"<html><head><title>{escape(product.name)}</title>\n"
        '<meta charset="utf-8">\n'  # no </head>: the parser closes it at <body>
        "<body><div id=page><div class=wrapper>\n"
        f"{_menu(cat)}\n"
        f'<nav class="breadcrumb"><a href="/">Home</a> › '
        f"<a href=/category/{product.category_slug}>{escape(product.category)}</nav>\n"
        "<article class=product-detail><table><tr><td>\n"
        f"<h1 class=name>{escape(product.name)}</h2>\n"
        f"<p class=sku>{product.sku}\n"
        f'<p class="price"><b><span itemprop=price content={product.price:.2f}>'
        f"{_price(product.price_cents)}</b>\n"
        f"<p class=rating data-rating={product.rating}><i>{_stars(product.rating)}</b></i>\n"
        f"<p class=description>{escape(product.description)}</td></tr></table>\n"
        f"<ul class=tags>{tags}</ul></div></div></span>\n"
        "<p>Salt & pepper not included.\n"
        f'<aside class="related"><ul>{related}</ul>\n'
        "</article>\n"
    )


def render_cart(cat: Catalogue) -> str:
    main = '<h1>Your basket</h1>\n<p class="empty">Your basket is empty.</p>\n'
    return _layout(cat, "Basket", main)
