"""Middlewares that add a request header unless the request already has it.

DefaultHeadersMiddleware (DEFAULT_REQUEST_HEADERS), UserAgentMiddleware (USER_AGENT, or
the spider's ``user_agent`` attribute) and HttpCompressionMiddleware (COMPRESSION_ENABLED:
``Accept-Encoding`` lists what the body decoder can undo, ``gzip, deflate, br, zstd``, so
no server is invited to send what cannot be decoded). A header the spider set always
wins, as in Scrapy. Decoding is not done here but in the transport, because
DOWNLOAD_MAXSIZE has to be enforced on the decoded bytes while they arrive; with
compression disabled no ``Accept-Encoding`` is sent, and a server that compresses
anyway is still decoded.
"""

from __future__ import annotations

from typing import Any

from skitter._types import CrawlContext
from skitter.downloader._decode import ACCEPT_ENCODING
from skitter.exceptions import NotConfigured
from skitter.http import Request
from skitter.settings import DownloaderSettings

__all__ = ["DefaultHeadersMiddleware", "HttpCompressionMiddleware", "UserAgentMiddleware"]


class DefaultHeadersMiddleware:
    """Adds DEFAULT_REQUEST_HEADERS to requests that lack them."""

    def __init__(self, headers: dict[str, str]) -> None:
        self._headers = list(headers.items())

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> DefaultHeadersMiddleware:
        headers = crawler.settings.view(DownloaderSettings).default_request_headers
        if not headers:
            raise NotConfigured
        return cls({str(k): str(v) for k, v in headers.items()})

    def process_request(self, request: Request, spider: Any = None) -> None:
        headers = request.headers
        for name, value in self._headers:
            headers.setdefault(name, value)


class UserAgentMiddleware:
    """Sets ``User-Agent``: the spider's ``user_agent`` attribute, else USER_AGENT."""

    def __init__(self, user_agent: str) -> None:
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> UserAgentMiddleware:
        user_agent = (
            getattr(crawler.spider, "user_agent", None)
            or crawler.settings.view(DownloaderSettings).user_agent
        )
        if not user_agent:
            raise NotConfigured
        return cls(user_agent)

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.headers.setdefault("User-Agent", self.user_agent)


class HttpCompressionMiddleware:
    """Asks for compressed bodies; the transport decodes them under DOWNLOAD_MAXSIZE."""

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpCompressionMiddleware:
        if not crawler.settings.view(DownloaderSettings).compression_enabled:
            raise NotConfigured
        return cls()

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
