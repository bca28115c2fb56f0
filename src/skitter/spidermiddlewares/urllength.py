"""Scrapy's ``scrapy.spidermiddlewares.urllength`` path for skitter's built-in."""

from skitter.spider import UrlLengthMiddleware

__all__ = ["UrlLengthMiddleware"]
