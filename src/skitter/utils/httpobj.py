"""Scrapy's ``scrapy.utils.httpobj``: a request's or response's URL, parsed."""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import ParseResult, urlparse

__all__ = ["urlparse_cached"]


@lru_cache(maxsize=1024)
def _parse(url: str) -> ParseResult:
    return urlparse(url)


def urlparse_cached(request_or_response: Any) -> ParseResult:
    """``urlparse(obj.url)``, parsed once per URL (requests carry no cache slot)."""
    return _parse(request_or_response.url)
