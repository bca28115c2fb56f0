"""Scrapy's module path for ``XMLFeedSpider`` and ``CSVFeedSpider``."""

from skitter.spiders._feed import CSVFeedSpider, XMLFeedSpider

__all__ = ["CSVFeedSpider", "XMLFeedSpider"]
