"""Scrapy's ``scrapy.downloadermiddlewares.httpauth`` path for skitter's built-in."""

from skitter.downloader import HttpAuthMiddleware

__all__ = ["HttpAuthMiddleware"]
