"""Middlewares that add a request header unless the request already has it.

DefaultHeadersMiddleware (DEFAULT_REQUEST_HEADERS), UserAgentMiddleware (USER_AGENT, or
the spider's ``user_agent`` attribute) and HttpCompressionMiddleware (COMPRESSION_ENABLED:
``Accept-Encoding`` lists what the body decoder can undo, ``gzip, deflate, br, zstd``, so
no server is invited to send what cannot be decoded). A header the spider set always
wins, as in Scrapy. Decoding is done in the transport, because DOWNLOAD_MAXSIZE has to be
enforced on the decoded bytes while they arrive; with compression disabled no
``Accept-Encoding`` is sent, and a server that compresses anyway is still decoded.

HttpCompressionMiddleware also has Scrapy's ``process_response``, for a body that reaches
it still encoded: one built by hand or by another middleware, or one whose stack holds a
coding the transport does not know (``gzip, foo``), which the transport leaves whole. It
undoes the known codings from the outside in, as Scrapy's does, under DOWNLOAD_MAXSIZE
(``meta["download_maxsize"]``; past it the response is ignored, with a warning) and
warns past DOWNLOAD_WARNSIZE. A response the transport decoded has no
``Content-Encoding`` left, so in a crawl this costs nothing.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from skitter._types import CrawlContext
from skitter.downloader._decode import ACCEPT_ENCODING
from skitter.exceptions import IgnoreRequest, NotConfigured, ScrapyDeprecationWarning
from skitter.http import Request, Response, TextResponse
from skitter.responsetypes import responsetypes
from skitter.settings import DownloaderSettings
from skitter.utils.gz import gunzip
from skitter.utils.wiring import DecompressionMaxSizeExceeded, inflate, unbrotli, unzstd

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
    """Sets ``User-Agent``: the spider's ``user_agent`` attribute, else USER_AGENT; with
    neither (USER_AGENT empty or None) it sends none, and stays in the chain for a
    ``user_agent`` that Scrapy's ``spider_opened`` brings later."""

    def __init__(self, user_agent: str | None = "Scrapy") -> None:
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> UserAgentMiddleware:
        user_agent = (
            getattr(crawler.spider, "user_agent", None)
            or crawler.settings.view(DownloaderSettings).user_agent
        )
        return cls(user_agent or None)

    def spider_opened(self, spider: Any) -> None:
        """Scrapy's hook: the spider's ``user_agent`` attribute, when it has one, wins."""
        self.user_agent = getattr(spider, "user_agent", None) or self.user_agent

    def process_request(self, request: Request, spider: Any = None) -> None:
        if self.user_agent:
            request.headers.setdefault("User-Agent", self.user_agent)


#: Scrapy's logger name for the middleware, under skitter's prefix.
compression_logger = logging.getLogger("skitter.downloadermiddlewares.httpcompression")

_DECODERS: dict[bytes, Any] = {
    b"gzip": gunzip,
    b"x-gzip": gunzip,
    b"deflate": inflate,
    b"br": unbrotli,
    b"zstd": unzstd,
}
"""What ``process_response`` undoes, by coding (``x-gzip`` is decoded, never asked for)."""

_SCRAPY_MAXSIZE = 1024 * 1024 * 1024
_SCRAPY_WARNSIZE = 32 * 1024 * 1024
"""The defaults of DOWNLOAD_MAXSIZE / DOWNLOAD_WARNSIZE, for one built without a crawler."""


class HttpCompressionMiddleware:
    """Asks for compressed bodies (the transport decodes them under DOWNLOAD_MAXSIZE) and
    decodes, as Scrapy's does, a body that reaches it still encoded (see the module)."""

    def __init__(self, stats: Any = None, *, crawler: CrawlContext | None = None) -> None:
        if crawler is None:
            warnings.warn(
                "Instantiating HttpCompressionMiddleware without a 'crawler' argument is "
                "deprecated (Scrapy's API); the size limits are the default ones.",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
            self.stats = stats
            self._max_size = _SCRAPY_MAXSIZE
            self._warn_size = _SCRAPY_WARNSIZE
            return
        limits = crawler.settings.view(DownloaderSettings)
        self.stats = crawler.stats
        self._max_size = limits.download_maxsize
        self._warn_size = limits.download_warnsize
        # The spider exists when the downloader builds its middlewares: read it now
        # rather than listen for spider_opened, which a crawl nobody listens to skips.
        spider = getattr(crawler, "spider", None)
        if spider is not None:
            self.open_spider(spider)

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpCompressionMiddleware:
        if not crawler.settings.view(DownloaderSettings).compression_enabled:
            raise NotConfigured
        return cls(crawler=crawler)

    def open_spider(self, spider: Any) -> None:
        """The spider's ``download_maxsize`` / ``download_warnsize`` attributes win."""
        self._max_size = getattr(spider, "download_maxsize", self._max_size)
        self._warn_size = getattr(spider, "download_warnsize", self._warn_size)

    def process_request(self, request: Request, spider: Any = None) -> None:
        request.headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        """``response`` with the known codings of a still-encoded body undone."""
        codings = response.headers.getlist("Content-Encoding")
        if request.method == "HEAD" or not codings:
            return response
        max_size = request.meta.get("download_maxsize", self._max_size)
        warn_size = request.meta.get("download_warnsize", self._warn_size)
        to_decode, to_keep = _split_codings(codings)
        body = response.body
        try:
            for coding in to_decode:
                body = _DECODERS[coding](body, max_size=max_size)
        except DecompressionMaxSizeExceeded as exc:
            message = (
                f"Ignored response {response} because its body ({len(response.body)} B "
                f"compressed, {exc.decompressed_size} B decompressed so far) exceeded "
                f"DOWNLOAD_MAXSIZE ({max_size} B) during decompression."
            )
            compression_logger.warning(message)
            raise IgnoreRequest(message) from exc
        if len(response.body) < warn_size <= len(body):
            compression_logger.warning(
                "%s body size after decompression (%d B) is larger than the download "
                "warning size (%d B).",
                response,
                len(body),
                warn_size,
            )
        if to_keep:
            compression_logger.warning(
                "%s cannot decode the response for %s from unsupported encoding(s) '%s'.",
                type(self).__name__,
                response.url,
                b",".join(to_keep).decode(errors="replace"),
            )
        return self._decoded(response, body, to_keep)

    def _decoded(self, response: Response, body: bytes, to_keep: list[bytes]) -> Response:
        """The response with ``body``, its class guessed again, ``to_keep`` left declared."""
        stats = self.stats
        if stats is not None and hasattr(stats, "inc"):
            stats.inc("httpcompression/response_bytes", len(body))
            stats.inc("httpcompression/response_count")
        elif stats is not None:  # a Scrapy StatsCollector passed to the constructor
            stats.inc_value("httpcompression/response_bytes", len(body))
            stats.inc_value("httpcompression/response_count")
        cls = responsetypes.from_args(headers=response.headers, url=response.url, body=body)
        changes: dict[str, Any] = {"body": body}
        if issubclass(cls, TextResponse):
            changes["encoding"] = None  # the declared one may sit in the decoded body
        decoded = response.replace(cls=cls, **changes)
        if to_keep:
            decoded.headers["Content-Encoding"] = to_keep
        else:
            del decoded.headers["Content-Encoding"]
        return decoded


def _split_codings(codings: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """The codings to undo, outermost (last applied) first, and those to keep: undoing
    stops at the first one not known, since what lies under it cannot be reached."""
    keep = [c.strip().lower() for value in codings for c in value.split(b",") if c.strip()]
    undo: list[bytes] = []
    while keep and keep[-1] in _DECODERS:
        undo.append(keep.pop())
    return undo, keep
