"""scrapy-inline-requests: a callback fetches a second page inline, as its README shows."""

import scrapy
from _common import ProductSpider, base_settings, product
from inline_requests import inline_requests


class Spider(ProductSpider):
    @inline_requests
    def parse_product(self, response):
        item = product(response)
        detail = yield scrapy.Request(response.urljoin(response.css("a.detail::attr(href)").get()))
        item["stock"] = detail.css("p.stock::text").get()
        yield item


def settings():
    return base_settings()
