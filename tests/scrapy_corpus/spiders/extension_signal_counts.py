"""An extension counting Scrapy's signals into the stats: the request, response, item
and error signals each fire as often as in Scrapy (a duplicate is scheduled, then
dropped; a DropItem is item_dropped, another exception item_error; a callback that
raises is spider_error)."""

import scrapy
from scrapy import signals
from scrapy.exceptions import DropItem

COUNTED = (
    "engine_started",
    "spider_opened",
    "request_scheduled",
    "request_dropped",
    "request_reached_downloader",
    "request_left_downloader",
    "headers_received",
    "response_downloaded",
    "response_received",
    "item_scraped",
    "item_dropped",
    "item_error",
    "spider_error",
)


class SignalCounter:
    def __init__(self, stats):
        self.stats = stats
        self.handlers = []  # the dispatcher keeps weak references: hold the handlers

    @classmethod
    def from_crawler(cls, crawler):
        ext = cls(crawler.stats)
        for name in COUNTED:
            handler = ext.counter(name)
            ext.handlers.append(handler)
            crawler.signals.connect(handler, signal=getattr(signals, name))
        return ext

    def counter(self, name):
        def count(**kwargs):
            self.stats.inc_value(f"counted/{name}")

        return count


class PickyPipeline:
    def process_item(self, item, spider):
        if not item["tags"]:
            raise DropItem("no tags")
        if item["author"] == "Ada Quill":
            raise ValueError("Ada Quill's quotes break this pipeline")
        return item


class SignalCountsSpider(scrapy.Spider):
    name = "signal_counts"
    custom_settings = {
        "EXTENSIONS": {SignalCounter: 500},
        "ITEM_PIPELINES": {PickyPipeline: 300},
    }

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        if response.url.endswith("/page/7/"):
            raise RuntimeError("the last page breaks the callback")
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "author": quote.css("small.author::text").get(),
                "tags": quote.css("a.tag::text").getall(),
            }
        yield from response.follow_all(css="ul.pager a")
