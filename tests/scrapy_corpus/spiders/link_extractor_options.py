"""LinkExtractor's options on one page: tags and attrs, deny_domains, process_value,
canonicalize and unique. (Not allow_domains: Scrapy compares it with the URL's host
and port, so "127.0.0.1" matches no link of a site on port 8000.)"""

import scrapy
from scrapy.linkextractors import LinkExtractor


def first_page_is_the_tag(value):
    return value[: -len("page/1/")] if value.endswith("/page/1/") else value


class LinkOptionsSpider(scrapy.Spider):
    name = "link_options"
    links = LinkExtractor(
        tags=("a",),
        attrs=("href",),
        deny_domains=["quotes.toscrape.com"],
        process_value=first_page_is_the_tag,
        canonicalize=True,
        unique=True,
    )

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for link in self.links.extract_links(response):
            yield {"url": link.url}
