"""Scrapy's ``scrapy.downloadermiddlewares.redirect`` path for skitter's built-in."""

from skitter.downloader import RedirectMiddleware

__all__ = ["RedirectMiddleware"]
