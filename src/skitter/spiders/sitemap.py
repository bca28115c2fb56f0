"""Scrapy's module path for ``SitemapSpider``."""

from skitter.spiders._sitemap import SitemapSpider

__all__ = ["SitemapSpider"]
