"""Scrapy's ``scrapy.downloadermiddlewares.httpcompression`` path for skitter's built-in."""

from skitter.downloader import HttpCompressionMiddleware

__all__ = ["HttpCompressionMiddleware"]
