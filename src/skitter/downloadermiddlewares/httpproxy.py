"""Scrapy's ``scrapy.downloadermiddlewares.httpproxy`` path for skitter's built-in."""

from skitter.downloader import HttpProxyMiddleware

__all__ = ["HttpProxyMiddleware"]
