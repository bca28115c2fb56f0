"""Scrapy 2.13's way to begin: ``async def start()``; the page number travels in
cb_kwargs."""

import scrapy


class AsyncStartSpider(scrapy.Spider):
    name = "async_start"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield scrapy.Request(f"{self.base_url}/", cb_kwargs={"page": 1})

    def parse(self, response, page):
        for quote in response.css("div.quote"):
            yield {
                "page": page,
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
            }
        next_page = response.css("li.next a::attr(href)").get()
        if next_page:
            yield response.follow(next_page, self.parse, cb_kwargs={"page": page + 1})
