"""Scrapy's ``scrapy.utils.request``: a request back from ``Request.to_dict``, and the
request fingerprint under Scrapy's function name."""

from skitter.http._curl import request_to_curl
from skitter.utils._request import (
    RequestFingerprinter,
    _fingerprint_cache,
    fingerprint,
    request_from_dict,
    request_httprepr,
)

__all__ = [
    "RequestFingerprinter",
    "_fingerprint_cache",
    "fingerprint",
    "request_from_dict",
    "request_httprepr",
    "request_to_curl",
]
