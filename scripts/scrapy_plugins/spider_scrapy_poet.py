"""scrapy-poet: a web-poet page object injected into the callback (its add-on's way), and
a callback that needs no response (``DummyResponse``): its page is never downloaded."""

import scrapy
from _common import SITE, ProductSpider, base_settings
from scrapy_poet import DummyResponse
from web_poet import RequestUrl, WebPage, field


class ProductPage(WebPage):
    @field
    def name(self):
        return self.css("h1.name::text").get()

    @field
    def via(self):
        return type(self).__name__


class Spider(ProductSpider):
    def start_requests(self):
        yield from super().start_requests()
        yield scrapy.Request(SITE + "/not-downloaded", callback=self.parse_url)

    async def parse_product(self, response, page: ProductPage):
        yield await page.to_item()

    def parse_url(self, response: DummyResponse, url: RequestUrl):
        yield {"dummy": type(response).__name__, "url": str(url)}


def settings():
    return base_settings(ADDONS={"scrapy_poet.Addon": 300})
