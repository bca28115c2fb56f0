"""The ground truth of the demo shop: what a correct crawl of it extracts."""

from __future__ import annotations

from typing import Any

from skitter.demo._catalogue import catalogue
from skitter.demo._market import market_products

__all__ = ["expected_items"]


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
        products += market_products()
    return [p.item() for p in sorted(products, key=lambda p: p.sku)]
