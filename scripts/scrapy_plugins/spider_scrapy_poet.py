"""scrapy-poet: a web-poet page object injected into the callback (its add-on's way)."""

from _common import ProductSpider, base_settings
from web_poet import WebPage, field


class ProductPage(WebPage):
    @field
    def name(self):
        return self.css("h1.name::text").get()

    @field
    def via(self):
        return type(self).__name__


class Spider(ProductSpider):
    async def parse_product(self, response, page: ProductPage):
        yield await page.to_item()


def settings():
    return base_settings(ADDONS={"scrapy_poet.Addon": 300})
