"""Scrapy's ``scrapy.utils.request``: a request back from ``Request.to_dict``, and the
request fingerprint under Scrapy's function name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skitter.http.wiring import request_to_curl
from skitter.utils._request import (
    RequestFingerprinter,
    RequestFingerprinterProtocol,
    _fingerprint_cache,
    fingerprint,
    request_from_dict,
    request_httprepr,
)

if TYPE_CHECKING:
    from skitter.http.request import CookiesT, VerboseCookie

__all__ = [
    "RequestFingerprinter",
    "RequestFingerprinterProtocol",
    "_fingerprint_cache",
    "_to_verbose_cookies",
    "fingerprint",
    "request_from_dict",
    "request_httprepr",
    "request_to_curl",
]


def _to_verbose_cookies(cookies: CookiesT) -> list[VerboseCookie]:
    """``Request(cookies=...)`` in its list form (Scrapy's helper, which tests and
    cookie plug-ins call): a dict becomes one ``{"name", "value"}`` per entry."""
    if isinstance(cookies, dict):
        return [{"name": name, "value": value} for name, value in cookies.items()]
    return cookies
