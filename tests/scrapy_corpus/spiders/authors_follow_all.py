"""The tutorial's AuthorSpider: follow_all over selectors, one item per author page (the
duplicate filter drops the author pages linked again and again)."""

import scrapy


class AuthorSpider(scrapy.Spider):
    name = "author"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        author_page_links = response.css(".author + a")
        yield from response.follow_all(author_page_links, self.parse_author)

        pagination_links = response.css("li.next a")
        yield from response.follow_all(pagination_links, self.parse)

    def parse_author(self, response):
        def extract_with_css(query):
            return response.css(query).get(default="").strip()

        yield {
            "name": extract_with_css("h3.author-title::text"),
            "birthdate": extract_with_css(".author-born-date::text"),
            "bio": extract_with_css(".author-description::text"),
        }
