"""The default transport: one HTTP exchange, from a Request to a Response, over aiohttp.

It implements ``_transport.Transport`` and is the crawl's hot path. It does
the network I/O and nothing the middlewares do: no redirects, no cookies, no retries,
no default headers (aiohttp's own User-Agent and Accept-Encoding are suppressed, so a
request carries exactly the headers the middlewares gave it, plus ``Host`` and
``Accept: */*``).

What it guarantees:

- One ``aiohttp.ClientSession`` per transport (per crawl), with a connection pool of
  CONCURRENT_REQUESTS. Host names are looked up by the crawl's resolver (``_dns``:
  DNS_RESOLVER, DNS_TIMEOUT, DNSCACHE_*), the one the per-IP slots ask too; a name that
  does not resolve is a ConnectError saying so.
- TLS with the crawl's one ``ssl.SSLContext`` (``_tls``: DOWNLOAD_VERIFY_CERTIFICATES,
  versions, ciphers, client certificate); a refused certificate is a
  ``TLSCertificateError`` naming OpenSSL's reason, any other handshake failure a
  ConnectError.
- Timeouts: DOWNLOAD_TIMEOUT for the whole exchange (``meta["download_timeout"]``
  overrides it per request), DOWNLOAD_CONNECT_TIMEOUT to connect,
  DOWNLOAD_READ_TIMEOUT between two reads.
- The body is read in chunks and decoded as it arrives (``_body``, ``_decode``), so
  DOWNLOAD_MAXSIZE (``meta["download_maxsize"]``; 0 = none) bounds the *decoded* size
  and the memory held: a too-large Content-Length is refused before reading, an endless
  body or a compression bomb is cut off at the limit. DOWNLOAD_WARNSIZE
  (``meta["download_warnsize"]``) logs one warning per response.
- A body that ends early (the connection closed before Content-Length, a broken chunked
  encoding, a compressed stream cut short) is a ConnectionLost, retried like any broken
  download, never a page with the bytes decoded so far: Scrapy's
  DOWNLOAD_FAIL_ON_DATALOSS=True. With False (or ``meta["download_fail_on_dataloss"]``)
  the bytes received are the response, flagged ``"dataloss"``, as in Scrapy; the
  body is then read in chunks also when its length is known, to keep what came.
- DOWNLOAD_MAX_HEADERS_SIZE bounds the response headers (names and values, in total);
  aiohttp itself refuses more than ``_MAX_HEADERS`` header lines or one longer than
  ``_MAX_HEADER_FIELD``. Either is a ResponseTooLarge, like a too-large body.
- A decoded body's ``Content-Encoding`` header is removed (Scrapy does the same, so
  nothing downstream decodes twice); the original value is kept in ``response.flags``
  as ``"decoded:<value>"``. Content-Length is left as the server sent it.
- ``meta["proxy"]`` sends the request through that HTTP proxy; credentials in its URL
  become ``Proxy-Authorization``, and are masked in every error that quotes the proxy
  URL. Environment proxies are HttpProxyMiddleware's job.
- It sends ``request.parsed_url``, the yarl URL the Downloader's scope check judged, so
  the host it connects to is the host that was checked.
- Every failure is one of skitter's errors naming the request: InvalidURL, ConnectError,
  DownloadTimeout, ConnectionLost (reset, truncated or corrupt body, broken HTTP),
  ResponseTooLarge (body or headers); anything else that cannot be sent is a plain RequestError.
- ``meta["download_latency"]`` is set to the seconds until the response headers came.

Stats: ``TransportStats``'s ``downloader/*`` keys (Scrapy's), ``response_bytes`` decoded.

Signals, only when connected: headers_received (``body_length``: Content-Length, or -1),
bytes_received for each chunk as it arrives, still encoded (as in Scrapy).
"""

from __future__ import annotations

import logging
import ssl
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from multidict import CIMultiDict, CIMultiDictProxy

from skitter._secrets import mask_text
from skitter.downloader._body import DATALOSS_HINT, decoder_for_body, read_body
from skitter.downloader._causes import (
    connect_failed,
    connect_timeout,
    lookup_failed,
    os_cause,
    read_timeout,
    took_too_long,
)
from skitter.downloader._dns import AiohttpResolver, CrawlResolver, crawl_resolver
from skitter.downloader._exchange import (
    NO_BODY_STATUSES,
    Limits,
    head_problem,
    make_response,
    signal_head,
    warn_length,
)
from skitter.downloader._streaming import split_proxy
from skitter.downloader._tls import tls_context, tls_error
from skitter.downloader._transport import TransportStats
from skitter.exceptions import (
    ConnectError,
    ConnectionLost,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import Request, Response
from skitter.signals import SignalManager

if TYPE_CHECKING:
    from skitter._types import StatsSink
    from skitter.settings import Settings


__all__ = ["AiohttpTransport"]

logger = logging.getLogger("skitter.downloader")

# What aiohttp may buffer of a response head before DOWNLOAD_MAX_HEADERS_SIZE is checked:
# 128 lines (aiohttp's default) of up to 32 KiB, 4 MiB in all. Real sites send CSP and
# Set-Cookie lines over aiohttp's default of 8 KiB, hence the longer lines; more lines
# than this, or longer ones, are abuse rather than a page worth fetching.
_MAX_HEADER_FIELD = 32 * 1024
_MAX_HEADERS = 128
_NO_BODY_STATUSES = NO_BODY_STATUSES
_LOST = (aiohttp.ClientPayloadError,)
_PROTOCOLS = {aiohttp.HttpVersion11: "HTTP/1.1", aiohttp.HttpVersion10: "HTTP/1.0"}


class AiohttpTransport:
    """The default transport: one aiohttp session for the crawl."""

    __slots__ = (
        "_connect_timeout",
        "_fail_on_dataloss",
        "_max_headers_size",
        "_maxsize",
        "_pool_size",
        "_read_timeout",
        "_resolver",
        "_session",
        "_signals",
        "_spider",
        "_stats",
        "_timeout",
        "_tls",
        "_warnsize",
    )

    def __init__(
        self,
        settings: Settings,
        stats: StatsSink,
        *,
        signals: SignalManager | None = None,
        spider: Any = None,
        tls: ssl.SSLContext | None = None,
        resolver: CrawlResolver | None = None,
    ) -> None:
        limits = Limits(settings)
        self._stats = TransportStats(stats)
        self._maxsize: int = limits.maxsize
        self._warnsize: int = limits.warnsize
        self._max_headers_size: int = limits.max_headers_size
        self._connect_timeout: float | None = limits.connect_timeout
        self._read_timeout: float | None = limits.read_timeout
        self._timeout = self._client_timeout(limits.timeout)
        self._pool_size: int = limits.pool_size
        self._fail_on_dataloss: bool = limits.fail_on_dataloss
        self._session: aiohttp.ClientSession | None = None
        self._signals = signals if signals is not None else SignalManager()
        self._spider = spider
        #: The crawl's TLS context: the Downloader's, else built from ``settings``.
        self._tls: ssl.SSLContext = tls if tls is not None else tls_context(settings)
        #: The crawl's resolver: the crawler's (shared with the per-IP slots), else its own.
        self._resolver = resolver if resolver is not None else crawl_resolver(settings)

    def _client_timeout(self, total: float | None) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(
            total=total or None, connect=self._connect_timeout, sock_read=self._read_timeout
        )

    # -- lifetime ---------------------------------------------------------------------
    async def open(self) -> None:
        if self._session is not None:
            return
        connector = aiohttp.TCPConnector(
            limit=self._pool_size,
            resolver=AiohttpResolver(self._resolver),
            use_dns_cache=False,  # the resolver caches (DNSCACHE_*), for the slots too
            ssl=self._tls,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies are CookiesMiddleware's job
            timeout=self._timeout,
            auto_decompress=False,  # we decode ourselves, under DOWNLOAD_MAXSIZE
            trust_env=False,  # environment proxies are HttpProxyMiddleware's job
            skip_auto_headers=("User-Agent", "Accept-Encoding"),
            max_line_size=_MAX_HEADER_FIELD,
            max_field_size=_MAX_HEADER_FIELD,
            max_headers=_MAX_HEADERS,
        )

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> AiohttpTransport:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- fetching ---------------------------------------------------------------------
    async def fetch(self, request: Request) -> Response:
        """Download ``request``; return the response whatever its status."""
        session = self._session
        if session is None:
            raise RuntimeError("AiohttpTransport.fetch() called before open() or after close()")
        stats = self._stats
        stats.request(request)
        try:
            response = await self._exchange(session, request)
        except RequestError as exc:
            stats.exception(exc)
            raise
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            # TimeoutError is an OSError; CancelledError is not caught, as it must not be.
            error = _translate(exc, request, self._timeout_of(request))
            stats.exception(error)
            if _has_secrets(exc):
                # aiohttp's proxy errors quote the proxy URL with its password (and carry
                # the Proxy-Authorization header): the message says it masked, and the
                # original does not travel on in the traceback.
                raise error from None
            raise error from exc
        stats.response(response)
        return response

    def _timeout_of(self, request: Request) -> float | None:
        if request.meta and request.meta.get("download_timeout") is not None:
            return request.meta["download_timeout"] or None
        return self._timeout.total

    async def _exchange(self, session: aiohttp.ClientSession, request: Request) -> Response:
        url = request.url
        if not url[:8].lower().startswith(("http://", "https://")):
            raise InvalidURL(
                f"cannot download {request!r}: only http:// and https:// URLs are supported",
                request=request,
            )
        meta = request.meta
        timeout = self._timeout
        maxsize = self._maxsize
        warnsize = self._warnsize
        fail_on_dataloss = self._fail_on_dataloss
        kwargs: dict[str, Any] = {}
        if meta:
            fail_on_dataloss = bool(meta.get("download_fail_on_dataloss", fail_on_dataloss))
            if meta.get("download_timeout") is not None:
                timeout = self._client_timeout(meta["download_timeout"])
            maxsize = meta.get("download_maxsize", maxsize)
            warnsize = meta.get("download_warnsize", warnsize)
            proxy = meta.get("proxy")
            if proxy:
                kwargs["proxy"] = _encoded_proxy(proxy) if "@" in proxy else proxy
        started = time.monotonic()
        async with session.request(
            request.method,
            request.parsed_url,  # the very object the scope check judged: no second parse
            headers=request.headers.text_items() if request.has_headers else None,
            data=request.body or None,
            timeout=timeout,
            allow_redirects=False,  # redirects are RedirectMiddleware's job
            **kwargs,
        ) as resp:
            meta["download_latency"] = time.monotonic() - started
            status = resp.status
            headers: CIMultiDictProxy[str] | CIMultiDict[str] = resp.headers
            ip_address = _peer_ip(resp)
            length = resp.content_length
            has_body = request.method != "HEAD" and status not in _NO_BODY_STATUSES
            size = (
                sum(len(name) + len(value) for name, value in resp.raw_headers)
                if self._max_headers_size
                else 0
            )
            problem = head_problem(
                request, size, length if has_body else None, maxsize, self._max_headers_size
            )
            if problem is not None:
                resp.close()  # never read, never pooled
                raise problem
            if has_body:
                warnsize = warn_length(request, length, warnsize)
            on_raw = (
                await signal_head(self._signals, self._spider, request, headers, length)
                if self._signals.live
                else None
            )
            coding = headers.get("Content-Encoding") if has_body else None
            decoder = decoder_for_body(request, coding, maxsize) if coding else None
            lost = False
            if decoder is None and length is not None and on_raw is None and fail_on_dataloss:
                body = await resp.read()  # size already checked; aiohttp stops at length
            else:
                body, lost = await read_body(
                    resp.content.iter_any(),
                    resp.close,
                    request,
                    decoder,
                    maxsize,
                    warnsize,
                    on_raw,
                    fail_on_dataloss,
                    _LOST,
                )
            if lost:
                logger.debug("%r: body ended early; passed on with the dataloss flag", request)
        return make_response(
            request,
            status,
            headers,
            body,
            decoded=coding if decoder is not None else None,
            lost=lost,
            ip_address=ip_address,
            protocol=_protocol(resp.version),
        )


def _protocol(version: aiohttp.HttpVersion | None) -> str:
    if version is None:
        return "HTTP/1.1"
    return _PROTOCOLS.get(version) or f"HTTP/{version.major}.{version.minor}"


def _peer_ip(resp: aiohttp.ClientResponse) -> str | None:
    """The server's IP, if the socket is still known: a small body has often been read
    and its connection handed back to the pool before we look, so the response's
    protocol (private, hence the guard) is asked rather than ``resp.connection``."""
    protocol = getattr(resp, "_protocol", None)
    transport = getattr(protocol, "transport", None)
    if transport is None:
        return None
    peer = transport.get_extra_info("peername")
    return peer[0] if peer else None


def _encoded_proxy(proxy: str) -> str:
    """The proxy URL with its credentials as skitter reads them (``split_proxy``: up to
    the last ``@``) percent-encoded, so that yarl reads them the same: a password with an
    unescaped ``/`` must not become a host and a port."""
    bare, auth = split_proxy(proxy)
    if auth is None:
        return proxy
    scheme, _, rest = bare.partition("://")
    return f"{scheme}://{quote(auth[0], safe='')}:{quote(auth[1], safe='')}@{rest}"


def _has_secrets(exc: BaseException) -> bool:
    text = str(exc)
    return mask_text(text) != text or isinstance(exc, aiohttp.ClientHttpProxyError)


def _translate(exc: BaseException, request: Request, total: float | None) -> RequestError:
    """The skitter error for an aiohttp or OS error; the message names the request."""
    detail = mask_text(str(exc) or type(exc).__name__)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return InvalidURL(f"cannot download {request!r}: invalid URL ({detail})", request=request)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return connect_timeout(request, detail)
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return read_timeout(request)
    if isinstance(exc, TimeoutError):
        return took_too_long(request, total)
    tls = tls_error(exc, request, detail)
    if tls is not None:
        return tls
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        reason = exc.os_error.strerror or str(exc.os_error) or type(exc.os_error).__name__
        return lookup_failed(request, exc.host, mask_text(reason))
    cause = os_cause(exc)
    if isinstance(exc, aiohttp.ClientConnectorError) and cause is not None:
        return connect_failed(request, cause, cause)
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ClientHttpProxyError):
        return ConnectError(f"{request!r}: cannot connect: {detail}", request=request)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return ConnectionLost(
            f"{request!r}: body incomplete: {detail}{DATALOSS_HINT}", request=request
        )
    if isinstance(exc, aiohttp.ClientResponseError):
        problem = _head_over_limits(exc)
        if problem is not None:
            return ResponseTooLarge(
                f"{request!r}: response headers over aiohttp's limits ({_MAX_HEADERS} lines "
                f"of at most {_MAX_HEADER_FIELD} bytes): {problem}; not downloaded",
                request=request,
            )
        return ConnectionLost(f"{request!r}: invalid HTTP response: {exc.message}", request=request)
    if isinstance(exc, aiohttp.ClientError | OSError):
        return ConnectionLost(
            f"{request!r}: connection lost: {cause or detail}", request=request, cause=cause
        )
    return RequestError(f"cannot send {request!r}: {detail}", request=request)


def _head_over_limits(exc: aiohttp.ClientResponseError) -> str | None:
    """What was too large if aiohttp refused the response head for its size, else None.
    The parser's error is a cause or two down; its text (which may quote a cookie) is
    not used."""
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, LineTooLong):
            return "a line is longer"
        if isinstance(cause, BadHttpMessage) and "too many" in str(cause.message).lower():
            return "too many lines"
        cause = cause.__cause__
    return None
