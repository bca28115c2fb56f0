"""Item pipelines given as classes in custom_settings: one built by from_crawler from a
setting of the project's own, one dropping duplicates (DropItem), as Scrapy's
documentation writes them."""

import scrapy
from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem


class MinWordsPipeline:
    def __init__(self, min_words):
        self.min_words = min_words

    @classmethod
    def from_crawler(cls, crawler):
        return cls(min_words=crawler.settings.getint("QUOTES_MIN_WORDS"))

    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        if len(adapter["text"].split()) < self.min_words:
            raise DropItem(f"Too short: {adapter['text']!r}")
        adapter["words"] = len(adapter["text"].split())
        return item


class DuplicatesPipeline:
    def open_spider(self, spider):
        self.ids_seen = set()

    def process_item(self, item, spider):
        adapter = ItemAdapter(item)
        if adapter["text"] in self.ids_seen:
            raise DropItem(f"Duplicate item found: {item!r}")
        self.ids_seen.add(adapter["text"])
        return item


class PipelinesSpider(scrapy.Spider):
    name = "pipelines"
    custom_settings = {
        "ITEM_PIPELINES": {DuplicatesPipeline: 100, MinWordsPipeline: 200},
        "QUOTES_MIN_WORDS": 9,
    }

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {"text": quote.css("span.text::text").get()}
        yield from response.follow_all(css="ul.pager a", callback=self.parse)
