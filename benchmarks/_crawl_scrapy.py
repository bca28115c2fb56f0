"""The Scrapy contender, run by crawl_bench.py as ``scrapy runspider _crawl_scrapy.py``.

Settings come from the command line (``-s``) so the parent shows them in one place; the
spider only counts pages, items and pages per host and reports its own rusage when it
closes. Scrapy's download slots are by hostname, so every port of a multi-host site
shares one slot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import scrapy
from _report import Meter, host_of
from scrapy import signals


class BenchSpider(scrapy.Spider):
    name = "bench"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]
        self.pages = 0
        self.items = 0
        self.hosts: Counter[str] = Counter()
        self.meter: Meter | None = None

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BenchSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        return spider

    def opened(self, spider: scrapy.Spider) -> None:
        self.meter = Meter()

    def parse(self, response: Any) -> Iterator[Any]:
        self.pages += 1
        self.hosts[host_of(response.url)] += 1
        for item in response.css("div.item"):
            self.items += 1
            yield {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        yield from response.follow_all(css="a::attr(href)")

    def closed(self, reason: str) -> None:
        assert self.meter is not None
        stats = self.crawler.stats.get_stats()
        self.meter.report(
            self.pages,
            self.items,
            hosts=dict(self.hosts),
            reason=reason,
            errors=stats.get("log_count/ERROR", 0),
            scraped=stats.get("item_scraped_count", 0),
        )
