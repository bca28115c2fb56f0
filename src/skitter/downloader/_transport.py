"""The transport contract, and what every transport shares: its stats and its errors.

A transport is the innermost layer of the downloader onion: one exchange, from a
Request to a Response. ``AiohttpTransport`` (``_aiohttp``, the default),
``HttpxTransport`` (``_httpx``, HTTP/2), ``CurlTransport`` (``_curl``, browser TLS
fingerprints) and ``BrowserTransport`` (``browser/``, requests to render) implement it;
``_transports`` says which downloads a request. A new one implements ``Transport`` (an
HTTP client: subclass ``_streaming.StreamingTransport``) and counts through
``TransportStats``, so that every transport reports the same ``downloader/*`` keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from skitter.exceptions import ResponseTooLarge
from skitter.http import Request, Response

if TYPE_CHECKING:
    from skitter._types import StatsSink

__all__ = ["Transport", "TransportStats", "headers_too_large"]


class Transport(Protocol):
    """What the Downloader needs from the network layer.

    The contract:

    - ``open`` is called once before the first ``fetch``, ``close`` once after the last
      (also when ``open`` or a fetch failed); ``close`` must be safe to call twice.
    - ``fetch`` returns the response for **any** status (no ``raise_for_status``): what
      a status means is the middlewares' decision. It does only the exchange: no
      redirects, cookies, retries or default headers, which are middlewares' jobs.
    - It sends ``request.parsed_url``, the very URL the Downloader's scope check judged
      (never a re-parse of ``request.url``), so the host it reaches is the host checked.
    - Limits: DOWNLOAD_TIMEOUT bounds the exchange (``meta["download_timeout"]`` per
      request), DOWNLOAD_MAXSIZE the body (``meta["download_maxsize"]``; 0 = none),
      DOWNLOAD_MAX_HEADERS_SIZE the response headers; DOWNLOAD_WARNSIZE
      (``meta["download_warnsize"]``) logs a warning. It sets
      ``meta["download_latency"]``, the seconds until the response headers came.
    - Every failure is a ``RequestError`` subclass naming the request: ``InvalidURL``,
      ``ConnectError``, ``DownloadTimeout``, ``ConnectionLost`` (retried by the
      scheduler), ``ResponseTooLarge`` (not retried); ``asyncio.CancelledError`` is
      never caught. A transport may also raise the ``CrawlControl`` signal
      ``IgnoreRequest`` (the browser does for a page sent offsite).
    - It sets ``response.protocol`` to what was spoken (``"HTTP/1.1"``, ``"HTTP/2"``).
    - It counts through ``TransportStats`` (Scrapy's ``downloader/*`` keys).
    """

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def fetch(self, request: Request) -> Response: ...


class TransportStats:
    """A transport's ``downloader/*`` counters (Scrapy's keys), written once for all.

    ``downloader/request_count``, ``downloader/request_method_count/<M>``,
    ``downloader/response_count``, ``downloader/response_status_count/<N>``,
    ``downloader/response_bytes`` (the body as handed on, i.e. decoded),
    ``downloader/exception_count``, ``downloader/exception_type_count/<class>`` (and
    ``.../<class>/<cause>``, see ``RequestError.cause``). The
    per-method and per-status keys are built once each, not per request (hot path).
    """

    __slots__ = ("_method_keys", "_stats", "_status_keys")

    def __init__(self, stats: StatsSink) -> None:
        self._stats = stats
        self._method_keys: dict[str, str] = {}
        self._status_keys: dict[int, str] = {}

    def request(self, request: Request) -> None:
        """A request is about to be sent."""
        stats = self._stats
        stats.inc("downloader/request_count")
        key = self._method_keys.get(request.method)
        if key is None:
            key = self._method_keys[request.method] = (
                f"downloader/request_method_count/{request.method}"
            )
        stats.inc(key)

    def response(self, response: Response) -> None:
        """A response came back (whatever its status)."""
        stats = self._stats
        stats.inc("downloader/response_count")
        key = self._status_keys.get(response.status)
        if key is None:
            key = self._status_keys[response.status] = (
                f"downloader/response_status_count/{response.status}"
            )
        stats.inc(key)
        stats.inc("downloader/response_bytes", len(response.body))

    def exception(self, exc: BaseException) -> None:
        """The exchange failed with ``exc`` (the skitter error the transport raises):
        counted by its class (Scrapy's key) and, when the transport knows it, by its
        cause under that (``.../ConnectError/Connection refused``)."""
        stats = self._stats
        stats.inc("downloader/exception_count")
        key = f"downloader/exception_type_count/{type(exc).__name__}"
        stats.inc(key)
        cause = getattr(exc, "cause", None)
        if isinstance(cause, str):
            stats.inc(f"{key}/{cause}")


def headers_too_large(request: Request, size: int, limit: int) -> ResponseTooLarge:
    """The error for headers (names and values) over DOWNLOAD_MAX_HEADERS_SIZE."""
    return ResponseTooLarge(
        f"{request!r}: response headers of {size} bytes are larger than "
        f"DOWNLOAD_MAX_HEADERS_SIZE ({limit} bytes); not downloaded",
        request=request,
    )
