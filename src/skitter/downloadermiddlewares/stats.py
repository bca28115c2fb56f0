"""Scrapy's ``scrapy.downloadermiddlewares.stats``: ``DownloaderStats``, which plug-ins
subclass (scrapy-poet's ``DownloaderStatsMiddleware``).

skitter's downloader counts the ``downloader/*`` stats itself, for every request it
sends, so this middleware counts nothing: a response a middleware makes up without a
download (scrapy-poet's ``DummyResponse``) is never counted, as Scrapy's subclasses want,
and one in the chain does not count a page twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the module's public names are its __all__
    from typing import Self

    from skitter.http import Request, Response

__all__ = ["DownloaderStats"]


class DownloaderStats:
    """Scrapy's downloader-stats middleware: a pass-through here (see the module)."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        return cls(crawler.stats)

    def process_request(self, request: Request, spider: Any = None) -> None:
        """Counted by the downloader when it sends the request."""

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        """Counted by the downloader when the response arrived."""
        return response

    def process_exception(self, request: Request, exception: Exception, spider: Any = None) -> None:
        """Counted by the downloader when the download failed."""
