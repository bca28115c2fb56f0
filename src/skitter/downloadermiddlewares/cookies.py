"""Scrapy's ``scrapy.downloadermiddlewares.cookies`` path for skitter's built-in."""

from skitter.downloader import CookiesMiddleware

__all__ = ["CookiesMiddleware"]
