"""Scrapy's ``scrapy.downloadermiddlewares.httpcompression`` path for skitter's built-in,
and ``ACCEPTED_ENCODINGS``: the codings it asks for, as Scrapy lists them (bytes)."""

from skitter.downloader import HttpCompressionMiddleware
from skitter.downloader.wiring import ACCEPT_ENCODING as _ACCEPT_ENCODING

ACCEPTED_ENCODINGS: list[bytes] = [name.strip().encode() for name in _ACCEPT_ENCODING.split(",")]

__all__ = ["ACCEPTED_ENCODINGS", "HttpCompressionMiddleware"]
