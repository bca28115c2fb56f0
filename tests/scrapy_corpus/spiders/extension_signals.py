"""An extension enabled through EXTENSIONS: from_crawler, NotConfigured, signals
(spider_opened, item_scraped, spider_closed) and crawler.stats."""

import scrapy
from scrapy import signals
from scrapy.exceptions import NotConfigured


class QuoteStats:
    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.getbool("QUOTESTATS_ENABLED"):
            raise NotConfigured
        ext = cls(crawler.stats)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider):
        self.stats.set_value("quotestats/opened", spider.name)

    def item_scraped(self, item, spider):
        self.stats.inc_value("quotestats/items")
        self.stats.max_value("quotestats/max_tags", len(item["tags"]))
        self.stats.min_value("quotestats/min_tags", len(item["tags"]))

    def spider_closed(self, spider, reason):
        self.stats.set_value("quotestats/closed", reason)


class ExtensionSpider(scrapy.Spider):
    name = "extension"
    custom_settings = {"EXTENSIONS": {QuoteStats: 500}, "QUOTESTATS_ENABLED": True}

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "author": quote.css("small.author::text").get(),
                "tags": quote.css("a.tag::text").getall(),
            }
        yield from response.follow_all(css="li.next a")
