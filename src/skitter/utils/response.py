"""Scrapy's ``scrapy.utils.response``: a response opened in a browser, its base URL."""

from skitter.utils._response import get_base_url, open_in_browser

__all__ = ["get_base_url", "open_in_browser"]
