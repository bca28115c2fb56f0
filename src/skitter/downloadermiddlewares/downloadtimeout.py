"""Scrapy's ``scrapy.downloadermiddlewares.downloadtimeout``: ``DownloadTimeoutMiddleware``.

skitter's transports apply DOWNLOAD_TIMEOUT themselves (``meta["download_timeout"]``
overrides it per request), so no built-in needs this middleware. Scrapy's class is here
for projects that subclass or call it: it writes the timeout into the request's meta,
the value the transport would use anyway, so enabling it changes nothing in a crawl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skitter.settings import DownloaderSettings as _DownloaderSettings
from skitter.signals import spider_opened as _spider_opened

if TYPE_CHECKING:  # annotations only: the module's public names are its __all__
    from typing import Self

    from skitter.http import Request, Response

__all__ = ["DownloadTimeoutMiddleware"]


class DownloadTimeoutMiddleware:
    """Sets ``meta["download_timeout"]`` (DOWNLOAD_TIMEOUT, or the spider's
    ``download_timeout`` attribute) on requests that have none; ``0`` sets nothing."""

    def __init__(self, timeout: float = 180) -> None:
        self._timeout = timeout

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        middleware = cls(float(crawler.settings.view(_DownloaderSettings).download_timeout))
        signals = getattr(crawler, "signals", None)
        if signals is not None:
            signals.connect(middleware.spider_opened, signal=_spider_opened)
        return middleware

    def spider_opened(self, spider: Any) -> None:
        self._timeout = getattr(spider, "download_timeout", self._timeout)

    def process_request(self, request: Request, spider: Any = None) -> Request | Response | None:
        if self._timeout:
            request.meta.setdefault("download_timeout", self._timeout)
        return None
