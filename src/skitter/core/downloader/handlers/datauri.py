"""Scrapy's ``scrapy.core.downloader.handlers.datauri``: ``data:`` URIs."""

from __future__ import annotations

from skitter.core.downloader.handlers._local import LocalDownloadHandler

__all__ = ["DataURIDownloadHandler"]


class DataURIDownloadHandler(LocalDownloadHandler):
    """Answers ``data:`` URIs from the URI itself (RFC 2397)."""
