"""Scrapy's ``scrapy.http.response.xml``."""

from skitter.http._response_types import XmlResponse

__all__ = ["XmlResponse"]
