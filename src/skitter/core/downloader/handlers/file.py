"""Scrapy's ``scrapy.core.downloader.handlers.file``: ``file:`` URLs."""

from __future__ import annotations

from skitter.core.downloader.handlers._local import LocalDownloadHandler

__all__ = ["FileDownloadHandler"]


class FileDownloadHandler(LocalDownloadHandler):
    """Reads ``file:`` URLs (the response class guessed from the name, then the bytes)."""
