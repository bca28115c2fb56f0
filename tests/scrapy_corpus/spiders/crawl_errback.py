"""A CrawlSpider Rule with an errback: the links that fail reach it as HttpError
failures, the one that works reaches the callback."""

from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.spiders import CrawlSpider, Rule


class BrokenLinksSpider(CrawlSpider):
    name = "broken_links"
    allowed_domains = ["127.0.0.1"]
    custom_settings = {"RETRY_ENABLED": False}
    rules = (
        Rule(
            LinkExtractor(restrict_css="ul.links"),
            callback="parse_page",
            errback="broken",
            follow=False,
        ),
    )

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/links/"]

    def parse_page(self, response):
        yield {"url": response.url, "status": response.status}

    def broken(self, failure):
        if failure.check(HttpError):
            yield {"url": failure.request.url, "status": failure.value.response.status}
