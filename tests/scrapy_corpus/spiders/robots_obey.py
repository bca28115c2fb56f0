"""ROBOTSTXT_OBEY, as a project made by ``scrapy startproject`` sets it."""

import scrapy


class PoliteSpider(scrapy.Spider):
    name = "polite"
    custom_settings = {"ROBOTSTXT_OBEY": True}

    def __init__(self, base_url="http://127.0.0.1:8000", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [f"{base_url}/", f"{base_url}/private/stats/", f"{base_url}/quote/7/"]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
