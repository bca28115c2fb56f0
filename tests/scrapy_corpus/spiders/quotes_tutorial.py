"""Scrapy's tutorial spider: start_urls, CSS selectors, response.follow to the next page."""

import scrapy


class QuotesSpider(scrapy.Spider):
    name = "quotes"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/page/1/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
                "tags": quote.css("div.tags a.tag::text").getall(),
            }

        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, callback=self.parse)
