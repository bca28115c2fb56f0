"""Scrapy's Response classes by content type: HtmlResponse, XmlResponse, TextResponse
(JSON, plain text) and a binary Response (a gzip file)."""

import scrapy
from scrapy.http import HtmlResponse, TextResponse, XmlResponse


class ResponseTypesSpider(scrapy.Spider):
    name = "response_types"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [
            f"{base_url}/quote/1/",
            f"{base_url}/feeds/quotes.xml",
            f"{base_url}/api/quotes?page=1",
            f"{base_url}/robots.txt",
            f"{base_url}/sitemaps/tags.xml.gz",
        ]

    def parse(self, response):
        if isinstance(response, HtmlResponse):
            kind = "html"
        elif isinstance(response, XmlResponse):
            kind = "xml"
        elif isinstance(response, TextResponse):
            kind = "text"
        else:
            kind = "binary"
        yield {"url": response.url, "kind": kind}
