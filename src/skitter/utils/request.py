"""Scrapy's ``scrapy.utils.request``: a request back from ``Request.to_dict``, and the
request fingerprint under Scrapy's function name."""

from skitter.http._curl import request_to_curl
from skitter.utils._request import fingerprint, request_from_dict

__all__ = ["fingerprint", "request_from_dict", "request_to_curl"]
