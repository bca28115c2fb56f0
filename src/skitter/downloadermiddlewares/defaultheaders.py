"""Scrapy's ``scrapy.downloadermiddlewares.defaultheaders`` path for skitter's built-in."""

from skitter.downloader import DefaultHeadersMiddleware

__all__ = ["DefaultHeadersMiddleware"]
