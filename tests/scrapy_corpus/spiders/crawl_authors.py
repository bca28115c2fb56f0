"""A CrawlSpider: one rule follows the pagination, one sends author pages to a callback."""

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class AuthorsCrawlSpider(CrawlSpider):
    name = "authors_crawl"
    allowed_domains = ["127.0.0.1"]

    rules = (
        Rule(LinkExtractor(restrict_css="li.next")),
        Rule(LinkExtractor(allow=r"/author/[\w-]+/$"), callback="parse_author"),
    )

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse_author(self, response):
        yield {
            "name": response.css("h3.author-title::text").get().strip(),
            "born": response.css(".author-born-date::text").get(),
            "where": response.css(".author-born-location::text").re_first(r"^in (.*)$"),
        }
