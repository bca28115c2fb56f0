"""An ASP.NET-style search form: every step posts the form back with its __VIEWSTATE
(FormRequest.from_response keeps hidden fields and the selected options)."""

import scrapy


class SearchSpider(scrapy.Spider):
    name = "viewstate"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/search.aspx"]

    def parse(self, response):
        for author in response.css("select#author > option::attr(value)").getall():
            if author:
                yield scrapy.FormRequest.from_response(
                    response,
                    formdata={"author": author},
                    dont_click=True,  # choosing an author posts the form, as its onchange does
                    callback=self.parse_tags,
                    cb_kwargs={"author": author},
                )

    def parse_tags(self, response, author):
        for tag in response.css("select#tag > option::attr(value)").getall():
            if tag:
                yield scrapy.FormRequest.from_response(
                    response,
                    formdata={"tag": tag},
                    callback=self.parse_results,
                )

    def parse_results(self, response):
        for quote in response.css("div.quote"):
            yield {
                "quote": quote.css(".content::text").get(),
                "author": quote.css(".author::text").get(),
                "tag": quote.css(".tag::text").get(),
            }
