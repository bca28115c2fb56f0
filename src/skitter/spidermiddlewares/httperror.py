"""Scrapy's ``scrapy.spidermiddlewares.httperror``: the error an errback checks for a
response whose status the spider does not handle (``failure.value.response``)."""

from skitter.exceptions import HttpError
from skitter.spider import HttpErrorMiddleware

__all__ = ["HttpError", "HttpErrorMiddleware"]
