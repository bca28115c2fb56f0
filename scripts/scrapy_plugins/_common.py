"""What the plug-ins' spiders share: the site's address and a product page's item."""

import os

SITE = os.environ.get("PLUGIN_SITE", "http://127.0.0.1:8000")
PROXIES = os.environ.get("PLUGIN_PROXIES", "").split()
WORK = os.environ.get("PLUGIN_WORK", ".")


def product(response):
    """The item of a product page: name, price when the page has one, URL."""
    item = {"name": response.css("h1.name::text").get(), "url": response.url}
    price = response.css("span.price::text").get()
    if price is not None:
        item["price"] = price
    return item


def base_settings(**extra):
    """Quiet, polite settings for a local site, plus the plug-in's own."""
    settings = {"LOG_LEVEL": "INFO", "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False}
    settings.update(extra)
    return settings


import scrapy  # noqa: E402  (after the constants, which need no Scrapy)


class ProductSpider(scrapy.Spider):
    """The home page links to four product pages; each gives one item."""

    name = "products"

    def start_requests(self):
        yield scrapy.Request(SITE + "/")

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse_product)

    def parse_product(self, response):
        yield product(response)
