"""Scrapy's spider kinds, at Scrapy's import path: ``from skitter.spiders import
CrawlSpider, Rule``. ``Spider`` is ``skitter.Spider``; the others are subclasses of it
(their Scrapy module paths, ``skitter.spiders.crawl``, ``.sitemap`` and ``.feed``,
work too)."""

from skitter.spider import Spider
from skitter.spiders._crawl import CrawlSpider, Rule
from skitter.spiders._feed import CSVFeedSpider, XMLFeedSpider
from skitter.spiders._sitemap import SitemapSpider

__all__ = ["CSVFeedSpider", "CrawlSpider", "Rule", "SitemapSpider", "Spider", "XMLFeedSpider"]
