"""A Selector built by hand, as older Scrapy code does: scrapy.selector.Selector over
the response, in XML mode, with a namespace registered."""

import scrapy
from scrapy.selector import Selector


class SelectorSpider(scrapy.Spider):
    name = "selector"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/feeds/quotes.xml"]

    def parse(self, response):
        selector = Selector(response=response, type="xml")
        selector.register_namespace("dc", "http://purl.org/dc/elements/1.1/")
        for item in selector.xpath("//item"):
            yield {
                "title": item.xpath("title/text()").get(),
                "creator": item.xpath("dc:creator/text()").get(),
            }
