"""Scrapy's ``scrapy.http.response``: the Response base class."""

from skitter.http._response import Response

__all__ = ["Response"]
