"""Scrapy's ``scrapy.utils.request``: a request back from ``Request.to_dict``, and the
request fingerprint under Scrapy's function name."""

from skitter.utils._request import fingerprint, request_from_dict

__all__ = ["fingerprint", "request_from_dict"]
