"""Scrapy's ``scrapy.downloadermiddlewares.httpcache`` path for skitter's built-in."""

from skitter.downloader import HttpCacheMiddleware

__all__ = ["HttpCacheMiddleware"]
