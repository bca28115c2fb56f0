"""The infinite-scroll page's JSON API, as Scrapy's "developer tools" guide reads it:
response.json() and has_next."""

import scrapy


class ScrollSpider(scrapy.Spider):
    name = "scroll"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield scrapy.Request(f"{self.base_url}/api/quotes?page=1")

    def parse(self, response):
        data = response.json()
        for quote in data["quotes"]:
            yield {
                "author": quote["author"]["name"],
                "text": quote["text"],
                "tags": quote["tags"],
            }
        if data["has_next"]:
            next_page = data["page"] + 1
            yield scrapy.Request(f"{self.base_url}/api/quotes?page={next_page}")
