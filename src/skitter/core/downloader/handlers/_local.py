"""The ``file:`` and ``data:`` handlers with Scrapy's handler API, on skitter's own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skitter.downloader.wiring import LocalHandler

if TYPE_CHECKING:
    from skitter.http import Request, Response

__all__ = ["LocalDownloadHandler"]


class LocalDownloadHandler:
    """Scrapy's handler API (``from_crawler``, ``download_request``, ``close``) over
    skitter's ``LocalHandler``, which reads ``DOWNLOAD_MAXSIZE`` and counts the stats."""

    lazy = False

    def __init__(self, crawler: Any) -> None:
        self._local = LocalHandler(crawler.settings, crawler.stats)

    @classmethod
    def from_crawler(cls, crawler: Any) -> LocalDownloadHandler:
        return cls(crawler)

    async def download_request(self, request: Request, spider: Any = None) -> Response:
        """The response to ``request`` (``spider`` is accepted for older callers)."""
        return await self._local.fetch(request)

    async def close(self) -> None:
        """Nothing is held open between requests."""
