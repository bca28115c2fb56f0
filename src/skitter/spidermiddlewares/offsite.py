"""Scrapy's ``scrapy.spidermiddlewares.offsite`` path for skitter's built-in."""

from skitter.spider import OffsiteMiddleware

__all__ = ["OffsiteMiddleware"]
