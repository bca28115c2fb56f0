"""Every link of every page, within allowed_domains: the footer's link to another site
is dropped as offsite, every page is visited once."""

import scrapy


class WholeSiteSpider(scrapy.Spider):
    name = "whole_site"
    allowed_domains = ["127.0.0.1"]

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a")
