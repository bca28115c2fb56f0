"""The base of the optional HTTP transports (httpx, curl): one exchange, client-neutral.

A subclass opens a stream to the server and hands back its head and its raw body
(``Head``); the rest is here, once for both: the scheme check, the per-request limits
(``meta["download_timeout"]``, ``download_maxsize``, ``download_warnsize``,
``download_fail_on_dataloss``), DOWNLOAD_TIMEOUT around the whole exchange, the head
checks, the signals, the body read and decoded by skitter's bounded decoder (the
client library never decompresses), the response, the stats, and the mapping of the
client's errors to skitter's (the subclass names them, ``_translate``). The messages
are masked (``_secrets``): a proxy URL's password never shows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote

from multidict import CIMultiDict

from skitter._secrets import mask_text, split_userinfo
from skitter.downloader._body import decoder_for_body, read_body
from skitter.downloader._causes import took_too_long
from skitter.downloader._dns import CrawlResolver, crawl_resolver
from skitter.downloader._exchange import (
    NO_BODY_STATUSES,
    Limits,
    head_problem,
    make_response,
    signal_head,
    warn_length,
)
from skitter.downloader._transport import TransportStats
from skitter.exceptions import InvalidURL, RequestError
from skitter.http import Request, Response
from skitter.signals import SignalManager

if TYPE_CHECKING:
    from skitter._types import StatsSink
    from skitter.settings import Settings

__all__ = ["Head", "StreamingTransport", "content_length", "split_proxy"]

logger = logging.getLogger("skitter.downloader")


@dataclass(slots=True)
class Head:
    """A response whose body has not been read: the raw chunks (an early end raises
    ``TruncatedBody``) and ``cut``, which drops the connection of a body not wanted."""

    status: int
    headers: CIMultiDict[str]
    headers_size: int
    protocol: str
    ip_address: str | None
    raw: AsyncIterator[bytes]
    cut: Callable[[], object]


class StreamingTransport:
    """A Transport over a client library that streams raw bytes (see the module)."""

    #: The DOWNLOAD_TRANSPORT / ``meta["transport"]`` name.
    name: ClassVar[str]
    #: The client library's exceptions, for ``_translate``.
    errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(
        self,
        settings: Settings,
        stats: StatsSink,
        *,
        signals: SignalManager | None = None,
        spider: Any = None,
        resolver: CrawlResolver | None = None,
    ) -> None:
        self.limits = Limits(settings)
        self._stats = TransportStats(stats)
        self._signals = signals if signals is not None else SignalManager()
        self._spider = spider
        self.resolver = resolver if resolver is not None else crawl_resolver(settings)
        self._open = False
        self._configure(settings)

    # -- what a subclass provides -------------------------------------------------------
    def _configure(self, settings: Settings) -> None:
        """Read the client's settings; ConfigError for one it cannot honour."""

    async def _start(self) -> None:
        """Build the client."""

    async def _stop(self) -> None:
        """Close the client."""

    def _send(self, request: Request, proxy: str | None) -> AbstractAsyncContextManager[Head]:
        raise NotImplementedError

    def _translate(self, exc: BaseException, request: Request, detail: str) -> RequestError:
        raise NotImplementedError

    # -- lifetime ------------------------------------------------------------------------
    async def open(self) -> None:
        if not self._open:
            await self._start()
            self._open = True

    async def close(self) -> None:
        if self._open:
            self._open = False
            await self._stop()

    async def __aenter__(self) -> StreamingTransport:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- fetching ------------------------------------------------------------------------
    async def fetch(self, request: Request) -> Response:
        """Download ``request``; return the response whatever its status."""
        if not self._open:
            raise RuntimeError(
                f"{type(self).__name__}.fetch() called before open() or after close()"
            )
        stats = self._stats
        stats.request(request)
        total = self.limits.timeout_of(request)
        caught: tuple[type[BaseException], ...] = (OSError, ValueError, *self.errors)
        try:
            async with asyncio.timeout(total):
                response = await self._exchange(request)
        except RequestError as exc:
            stats.exception(exc)
            raise
        except TimeoutError:  # the whole exchange's bound (DOWNLOAD_TIMEOUT)
            error: RequestError = took_too_long(request, total)
            stats.exception(error)
            raise error from None
        except caught as exc:
            text = str(exc) or type(exc).__name__
            detail = mask_text(text)
            error = self._translate(exc, request, detail)
            stats.exception(error)
            if detail != text:
                raise error from None  # the original quotes a secret: it does not travel on
            raise error from exc
        stats.response(response)
        return response

    async def _exchange(self, request: Request) -> Response:
        if not request.url[:8].lower().startswith(("http://", "https://")):
            raise InvalidURL(
                f"cannot download {request!r}: only http:// and https:// URLs are supported",
                request=request,
            )
        limits = self.limits
        meta = request.meta
        maxsize = meta.get("download_maxsize", limits.maxsize)
        warnsize = meta.get("download_warnsize", limits.warnsize)
        fail_on_dataloss = bool(meta.get("download_fail_on_dataloss", limits.fail_on_dataloss))
        started = time.monotonic()
        async with self._send(request, meta.get("proxy") or None) as head:
            meta["download_latency"] = time.monotonic() - started
            headers = head.headers
            has_body = request.method != "HEAD" and head.status not in NO_BODY_STATUSES
            length = content_length(headers) if has_body else None
            problem = head_problem(
                request, head.headers_size, length, maxsize, limits.max_headers_size
            )
            if problem is not None:
                head.cut()
                raise problem
            warnsize = warn_length(request, length, warnsize)
            on_raw = (
                await signal_head(self._signals, self._spider, request, headers, length)
                if self._signals.live
                else None
            )
            coding = headers.get("Content-Encoding") if has_body else None
            decoder = decoder_for_body(request, coding, maxsize) if coding else None
            body, lost = b"", False
            if has_body:
                body, lost = await read_body(
                    head.raw,
                    head.cut,
                    request,
                    decoder,
                    maxsize,
                    warnsize,
                    on_raw,
                    fail_on_dataloss,
                )
            if lost:
                logger.debug("%r: body ended early; passed on with the dataloss flag", request)
        return make_response(
            request,
            head.status,
            headers,
            body,
            decoded=coding if decoder is not None else None,
            lost=lost,
            ip_address=head.ip_address,
            protocol=head.protocol,
        )


def content_length(headers: CIMultiDict[str]) -> int | None:
    value = headers.get("Content-Length")
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() else None


def split_proxy(proxy: str) -> tuple[str, tuple[str, str] | None]:
    """A proxy URL without its credentials, and the credentials (percent-decoded). The
    userinfo is read by skitter's one rule (``split_userinfo``: up to the last ``@``), so
    a password with an unescaped ``/`` is sent as the password, never taken for a host
    and port (whose error would quote part of it)."""
    prefix, userinfo, rest = split_userinfo(proxy)
    if userinfo is None:
        return proxy, None
    user, _, password = userinfo.partition(":")
    return prefix + rest, (unquote(user), unquote(password))
