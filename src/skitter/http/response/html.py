"""Scrapy's ``scrapy.http.response.html``."""

from skitter.http._response_types import HtmlResponse

__all__ = ["HtmlResponse"]
