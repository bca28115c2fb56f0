"""The tutorial's spider arguments: ``scrapy crawl quotes -a tag=humor``, read in
start_requests(), as spiders written before Scrapy 2.13 begin (Scrapy 2.19 no longer
calls it; skitter's default start() still does)."""

import scrapy


class TagSpider(scrapy.Spider):
    name = "by_tag"
    base_url = "http://127.0.0.1:8000"

    def start_requests(self):
        url = f"{self.base_url}/"
        tag = getattr(self, "tag", None)
        if tag is not None:
            url = url + "tag/" + tag + "/"
        yield scrapy.Request(url, self.parse)

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
            }

        next_page = response.css("li.next a::attr(href)").get()
        if next_page is not None:
            yield response.follow(next_page, self.parse)
