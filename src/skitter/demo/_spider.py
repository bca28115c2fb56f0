"""The example spider for the demo shop: what a first skitter spider looks like.

Run it against the bundled site (``skitter demo``) or from Python::

    async with serve_demo_site() as base_url:
        stats = await Crawler(DemoSpider, start_url=base_url).run()
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from skitter import Request, Response, Spider
from skitter._types import CrawlContext
from skitter.downloader.browser import browser_problem
from skitter.http import url_host
from skitter.settings import Settings

__all__ = ["DemoSpider"]

logger = logging.getLogger("skitter.demo")


def _can_render(settings: Settings | None) -> bool:
    problem = browser_problem(settings)
    if problem is not None:
        # INFO, not WARNING: nothing went wrong, the crawl adapts to the machine and the
        # expected items (expected_items(rendered=False)) leave these pages out too.
        logger.info(
            "Skipping the demo shop's JavaScript pages (expected without a browser; "
            "the check leaves them out too): %s",
            problem,
        )
    return problem is None


class DemoSpider(Spider):
    """Crawls the demo shop's catalogue and yields one item per product."""

    name = "demo"
    custom_settings = {"ROBOTSTXT_OBEY": True}  # the shop's robots.txt keeps us out of /cart
    # Seconds before retries 1, 2 and 3 (pyspider's retry_delay): the shop's gift-card
    # page always fails, and the default back-off would leave the demo idle for 10 s.
    retry_delay = [0.1, 0.2, 0.4]

    def __init__(
        self,
        start_url: str | None = None,
        base_url: str | None = None,
        render_js: bool | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        url = start_url or base_url
        if not url:
            raise ValueError("DemoSpider needs the shop's address: start_url=http://host:port/")
        self.start_urls = [url]
        # Links to other hosts (the shop's "partner" site) are dropped by the engine.
        self.allowed_domains = [url_host(url)]
        # The market's pages are built by JavaScript: rendered when this machine can
        # (Playwright and Chromium installed), else skipped, and expected_items() agrees.
        self.render_js = render_js if render_js is not None else _can_render(None)

    @classmethod
    def from_crawler(cls, crawler: CrawlContext, *args: Any, **kwargs: Any) -> Spider:
        # Under a crawler, "can this machine render" asks the crawl's own settings
        # (its BROWSER_EXECUTABLE_PATH, from the environment too under the CLI).
        if kwargs.get("render_js") is None:
            kwargs["render_js"] = _can_render(crawler.settings)
        return super().from_crawler(crawler, *args, **kwargs)

    def parse(self, response: Response) -> Iterator[Request]:
        """The home page and category pages: follow the menu, pagination and products."""
        yield from response.follow_all(css="nav.menu a:not(.js)")
        if self.render_js:  # links marked .js lead to pages built by JavaScript
            yield from response.follow_all(
                css="nav.menu a.js", callback=self.parse_market, render=True
            )
        yield from response.follow_all(css="nav.pagination a")
        # A product card links its product twice (title and "#reviews") and has a
        # "javascript:" basket button: follow_all skips what cannot be fetched and the
        # dupe filter drops the second link, so no need to pick one by hand.
        yield from response.follow_all(css="article.product a", callback=self.parse_product)

    def parse_market(self, response: Response) -> Iterator[Request]:
        """The market, as the browser built it: its product cards, each rendered too."""
        yield from response.follow_all(
            css="section.market a.title", callback=self.parse_product, render=True
        )

    def parse_product(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        product = response.css("article.product-detail")
        yield {
            "name": product.css("h1.name::text").get("").strip(),
            "sku": product.css(".sku::text").get("").strip(),
            "price": float(product.css("[itemprop=price]::attr(content)").get("nan")),
            "category": response.css("nav.breadcrumb a::text").getall()[-1],
            "rating": float(product.css(".rating::attr(data-rating)").get("nan")),
            "description": product.css(".description::text").get("").strip(),
            "tags": product.css(".tags li::text").getall(),
        }
        yield from response.follow_all(css="aside.related a", callback=self.parse_product)
