"""Scrapy's ``scrapy.downloadermiddlewares.stats``: ``DownloaderStats``, which plug-ins
subclass (scrapy-poet's ``DownloaderStatsMiddleware``), and ``get_header_size``.

skitter's downloader counts the ``downloader/*`` stats itself, for every request it
sends, so this middleware counts nothing: a response a middleware makes up without a
download (scrapy-poet's ``DummyResponse``) is never counted, as Scrapy's subclasses want,
and one in the chain does not count a page twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the module's public names are its __all__
    from collections.abc import Mapping
    from typing import Self

    from skitter.http import Request, Response

__all__ = ["DownloaderStats", "get_header_size"]


def get_header_size(headers: Mapping[Any, Any]) -> int:
    """The bytes ``headers`` take on the wire, as Scrapy counts them: ``name: value`` per
    value, lines joined by CRLF. A value that is not a list or tuple of values counts
    for nothing (Scrapy's helper takes a Headers mapping, whose values are lists)."""
    size = 0
    for name, values in headers.items():
        if isinstance(values, (list, tuple)):
            size += sum(len(b": ") + len(name) + len(value) for value in values)
    return size + len(b"\r\n") * (len(headers) - 1)


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
