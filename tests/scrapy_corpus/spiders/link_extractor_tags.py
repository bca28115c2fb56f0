"""A plain Spider using LinkExtractor itself: allow, deny, restrict_css, unique links
per page, and Link objects handed to response.follow."""

import scrapy
from scrapy.linkextractors import LinkExtractor


class TagLinksSpider(scrapy.Spider):
    name = "tag_links"
    allowed_domains = ["127.0.0.1"]
    tag_links = LinkExtractor(restrict_css="div.quote div.tags", allow=r"/tag/", deny=r"/tag/humor/")
    next_links = LinkExtractor(restrict_xpaths='//li[@class="next"]')

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for link in self.tag_links.extract_links(response):
            yield {"page": response.url, "url": link.url, "text": link.text}
        for link in self.next_links.extract_links(response):
            yield response.follow(link, callback=self.parse)
