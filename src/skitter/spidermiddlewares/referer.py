"""Scrapy's ``scrapy.spidermiddlewares.referer`` path for skitter's built-in."""

from skitter.spider import RefererMiddleware

__all__ = ["RefererMiddleware"]
