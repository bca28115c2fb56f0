"""Scrapy's module path for ``CrawlSpider`` and ``Rule``."""

from skitter.spiders._crawl import CrawlSpider, Rule

__all__ = ["CrawlSpider", "Rule"]
