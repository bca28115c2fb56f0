"""custom_settings: DEPTH_LIMIT stops the pagination after three pages."""

import scrapy


class DepthSpider(scrapy.Spider):
    name = "depth"
    custom_settings = {"DEPTH_LIMIT": 2}

    def __init__(self, base_url="http://127.0.0.1:8000", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [base_url + "/"]

    def parse(self, response):
        for text in response.css("div.quote span.text::text").getall():
            yield {"text": text, "depth": response.meta["depth"]}
        yield from response.follow_all(css="li.next a")
