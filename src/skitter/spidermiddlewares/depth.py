"""Scrapy's ``scrapy.spidermiddlewares.depth`` path for skitter's built-in."""

from skitter.spider import DepthMiddleware

__all__ = ["DepthMiddleware"]
