"""Scrapy's ``scrapy.http.response.json``."""

from skitter.http._response_types import JsonResponse

__all__ = ["JsonResponse"]
