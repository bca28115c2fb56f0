"""Following every pager link, Previous included: the duplicate filter drops what was
seen, but ``/`` and ``/page/1/`` are two URLs, so page 1 is parsed twice, as in Scrapy."""

import scrapy


class PagerSpider(scrapy.Spider):
    name = "pager"

    def __init__(self, base_url="http://127.0.0.1:8000", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [base_url + "/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {"text": quote.css("span.text::text").get(), "url": response.url}
        for a in response.css("ul.pager a"):
            yield response.follow(a, callback=self.parse)
