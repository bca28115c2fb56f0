"""Scrapy's ``scrapy.downloadermiddlewares.useragent`` path for skitter's built-in."""

from skitter.downloader import UserAgentMiddleware

__all__ = ["UserAgentMiddleware"]
