"""Scrapy's ``scrapy.contracts.default``: the built-in contracts, at the same path."""

from skitter.contracts._default import (
    CallbackKeywordArgumentsContract,
    MetadataContract,
    ReturnsContract,
    ScrapesContract,
    UrlContract,
)

__all__ = [
    "CallbackKeywordArgumentsContract",
    "MetadataContract",
    "ReturnsContract",
    "ScrapesContract",
    "UrlContract",
]
