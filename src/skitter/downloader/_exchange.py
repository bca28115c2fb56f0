"""What every HTTP transport does around its client library, written once.

aiohttp, httpx and curl differ in how bytes move; the rules do not. Here: the limits
read from the settings (``Limits``) and per request (``meta``), the checks on a response
head (headers size, Content-Length against DOWNLOAD_MAXSIZE and DOWNLOAD_WARNSIZE),
the signals sent when the head arrives, and how a Response is made from what came
(the class chosen as Scrapy's responsetypes do, a decoded body's ``Content-Encoding``
removed and kept in ``flags``, ``"dataloss"``, ``protocol``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from multidict import CIMultiDict, CIMultiDictProxy

from skitter.downloader._body import RawHook, warn_size
from skitter.downloader._transport import headers_too_large
from skitter.exceptions import ConfigError, ResponseTooLarge
from skitter.http import Headers as ScrapyHeaders
from skitter.http import Request, Response, response_class
from skitter.settings import DownloaderSettings
from skitter.signals import SignalManager, bytes_received, headers_received

if TYPE_CHECKING:
    from skitter.settings import Settings

__all__ = [
    "NO_BODY_STATUSES",
    "Limits",
    "head_problem",
    "make_response",
    "signal_head",
    "warn_length",
]

NO_BODY_STATUSES = frozenset({204, 304})
Headers = CIMultiDictProxy[str] | CIMultiDict[str]  # a transport's, as it read them


class Limits:
    """A transport's limits from the settings; negative sizes are refused at start."""

    __slots__ = (
        "connect_timeout",
        "fail_on_dataloss",
        "max_headers_size",
        "maxsize",
        "pool_size",
        "read_timeout",
        "timeout",
        "warnsize",
    )

    def __init__(self, settings: Settings) -> None:
        limits = settings.view(DownloaderSettings)
        for name, value in (
            ("DOWNLOAD_MAXSIZE", limits.download_maxsize),
            ("DOWNLOAD_WARNSIZE", limits.download_warnsize),
            ("DOWNLOAD_MAX_HEADERS_SIZE", limits.download_max_headers_size),
        ):
            if value < 0:
                raise ConfigError(f"{name} must be 0 (no limit) or more, got {value}")
        self.maxsize: int = limits.download_maxsize
        self.warnsize: int = limits.download_warnsize
        self.max_headers_size: int = limits.download_max_headers_size
        self.timeout: float | None = limits.download_timeout or None
        self.connect_timeout: float | None = limits.download_connect_timeout or None
        self.read_timeout: float | None = limits.download_read_timeout or None
        self.pool_size: int = limits.concurrent_requests
        self.fail_on_dataloss: bool = bool(limits.download_fail_on_dataloss)

    def timeout_of(self, request: Request) -> float | None:
        """The whole exchange's bound: ``meta["download_timeout"]``, else the setting."""
        meta = request.meta
        if meta and meta.get("download_timeout") is not None:
            return meta["download_timeout"] or None
        return self.timeout


def head_problem(
    request: Request, headers_size: int, length: int | None, maxsize: int, max_headers_size: int
) -> ResponseTooLarge | None:
    """Why the response must not be read (headers or Content-Length over the limits)."""
    if max_headers_size and headers_size > max_headers_size:
        return headers_too_large(request, headers_size, max_headers_size)
    if length is not None and maxsize and length > maxsize:
        return ResponseTooLarge(
            f"{request!r}: Content-Length {length} is larger than "
            f"DOWNLOAD_MAXSIZE ({maxsize} bytes); not downloaded",
            request=request,
        )
    return None


def warn_length(request: Request, length: int | None, warnsize: int) -> int:
    """Warn for a Content-Length over DOWNLOAD_WARNSIZE; the warnsize left for the body."""
    if warnsize and length is not None and length > warnsize:
        warn_size(request, length, warnsize)
        return 0
    return warnsize


async def signal_head(
    signals: SignalManager, spider: Any, request: Request, headers: Headers, length: int | None
) -> RawHook | None:
    """Send headers_received; what sends bytes_received for each chunk, if connected."""
    if headers_received in signals.live:
        await signals.send_catch_log_async(
            headers_received,
            headers=ScrapyHeaders.from_text(headers.items()),  # bytes, as Scrapy sends them
            body_length=-1 if length is None else length,
            request=request,
            spider=spider,
        )
    if bytes_received not in signals.live:
        return None

    async def on_raw(data: bytes) -> object:
        return await signals.send_catch_log_async(
            bytes_received, data=data, request=request, spider=spider
        )

    return on_raw


def make_response(
    request: Request,
    status: int,
    headers: Headers,
    body: bytes,
    *,
    decoded: str | None,
    lost: bool,
    ip_address: str | None,
    protocol: str,
) -> Response:
    """The Response for what came; ``decoded``: the Content-Encoding undone, if any."""
    flags: list[str] | None = None
    if decoded is not None:
        headers = CIMultiDict(headers)
        del headers["Content-Encoding"]
        flags = [f"decoded:{decoded}"]
    if lost:
        flags = [*(flags or ()), "dataloss"]
    url = request.url
    return response_class(headers, url, body)(
        url,
        status,
        headers,
        body,
        request,
        flags=flags,
        ip_address=ip_address,
        protocol=protocol,
    )
