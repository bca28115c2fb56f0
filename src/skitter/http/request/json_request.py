"""Scrapy's ``scrapy.http.request.json_request``."""

from skitter.http._json_request import JsonRequest

__all__ = ["JsonRequest"]
