"""An item built over two pages: the quote from the list, the birth date from the
author's page. The half-built item goes in cb_kwargs, the list page's URL in meta; the
author page is asked for once per quote (dont_filter)."""

import scrapy


class QuoteAuthorSpider(scrapy.Spider):
    name = "quote_author"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield scrapy.Request(f"{self.base_url}/", callback=self.parse)

    def parse(self, response):
        for quote in response.css("div.quote"):
            item = {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
            }
            author_url = quote.css(".author + a::attr(href)").get()
            yield response.follow(
                author_url,
                callback=self.parse_author,
                cb_kwargs={"item": item},
                meta={"listed_on": response.url},
                dont_filter=True,
            )
        for a in response.css("li.next a"):
            yield response.follow(a, callback=self.parse)

    def parse_author(self, response, item):
        item["born"] = response.css(".author-born-date::text").get()
        item["listed_on"] = response.meta["listed_on"]
        yield item
