"""Scrapy's ``scrapy.utils.sitemap``: a sitemap's entries, and the sitemaps a
robots.txt names (the reader SitemapSpider uses)."""

from skitter.spiders.wiring import Sitemap, sitemap_urls_from_robots

__all__ = ["Sitemap", "sitemap_urls_from_robots"]
