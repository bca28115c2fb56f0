"""Scrapy's ``scrapy.downloadermiddlewares.offsite`` path for skitter's built-in."""

from skitter.downloader import OffsiteMiddleware

__all__ = ["OffsiteMiddleware"]
