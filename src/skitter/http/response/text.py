"""Scrapy's ``scrapy.http.response.text``."""

from skitter.http._response_types import TextResponse

__all__ = ["TextResponse"]
