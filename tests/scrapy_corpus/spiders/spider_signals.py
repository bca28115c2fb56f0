"""A spider that connects its own signal handlers in from_crawler, as Scrapy's signals
documentation shows: it counts the responses it received and, once idle, asks for one
more page and keeps the spider open with DontCloseSpider."""

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider


class SignalsSpider(scrapy.Spider):
    name = "signals"
    base_url = "http://127.0.0.1:8000"
    extra_sent = False

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.response_received, signal=signals.response_received)
        crawler.signals.connect(spider.spider_idle, signal=signals.spider_idle)
        return spider

    async def start(self):
        yield scrapy.Request(f"{self.base_url}/page/1/")

    def response_received(self, response, request, spider):
        self.crawler.stats.inc_value("signals/responses")

    def spider_idle(self, spider):
        if not self.extra_sent:
            self.extra_sent = True
            self.crawler.engine.crawl(scrapy.Request(f"{self.base_url}/page/7/"))
            raise DontCloseSpider

    def parse(self, response):
        for text in response.css("span.text::text").getall():
            yield {"text": text, "url": response.url}
