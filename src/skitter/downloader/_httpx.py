"""The ``httpx`` transport: HTTP/2 (and HTTP/1.1) through httpx's engine, httpcore, and h2.

Chosen by DOWNLOAD_TRANSPORT = "httpx" or ``meta["transport"] = "httpx"``; the
extra ``skitter[http2]`` installs it. Servers that offer HTTP/2 in TLS's ALPN get it
(``response.protocol == "HTTP/2"``), the others HTTP/1.1; plain ``http://`` is HTTP/1.1.

httpcore rather than ``httpx.AsyncClient``: the client would add what the middlewares
do (cookies, redirects, decompression, default headers) and has no hook for the
crawl's resolver; httpcore has none of them and takes a network backend, through which
host names are looked up by the crawl's resolver (``_dns``). Everything else (limits,
decoding, errors, stats) is ``_streaming``'s, as for every optional transport.

- TLS: a context of its own built from the same settings (``_tls``), since httpcore
  sets ALPN on the context it is given; so every TLS setting holds as for aiohttp.
- ``meta["proxy"]``: an HTTP(S) proxy, connection pools of its own per proxy URL;
  credentials in its URL become ``Proxy-Authorization`` (tunnelled with CONNECT for
  https).
- Connections: CONCURRENT_REQUESTS in all, in pools of ``_SHARD`` taken in turn. One
  httpcore pool's bookkeeping costs its connections times its requests on every event,
  so a single pool of 64 spent about ten times the CPU per page of 16 pools of 4.
- DOWNLOAD_CONNECT_TIMEOUT bounds connecting, DOWNLOAD_READ_TIMEOUT each read.
"""

from __future__ import annotations

import ssl
import weakref
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import h2  # noqa: F401  # httpcore's HTTP/2 needs it: missing, the extra is missing
import httpcore
from multidict import CIMultiDict

from skitter.downloader._causes import (
    connect_failed,
    connect_timeout,
    lookup_failed,
    os_cause,
    read_timeout,
)
from skitter.downloader._decode import TruncatedBody
from skitter.downloader._dns import CrawlResolver
from skitter.downloader._streaming import Head, StreamingTransport, split_proxy
from skitter.downloader._tls import handshake_error, tls_context
from skitter.exceptions import (
    ConnectionLost,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import Request

if TYPE_CHECKING:
    from skitter.settings import Settings

__all__ = ["HttpxTransport"]

_MAX_HEAD = httpcore.AsyncHTTP11Connection.MAX_INCOMPLETE_EVENT_SIZE
_SHARD = 4
"""Connections per httpcore pool (see the module's docstring)."""


class _LookupFailed(OSError):
    """The crawl's resolver found no address for ``host``."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(reason)
        self.host = host


class _ResolvingBackend(httpcore.AsyncNetworkBackend):
    """httpcore's own backend, connecting to the address the crawl's resolver gives."""

    def __init__(self, resolver: CrawlResolver) -> None:
        self._resolver = resolver
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            address = (await self._resolver.resolve(host))[0]
        except OSError as exc:
            raise _LookupFailed(host, exc.strerror or str(exc) or type(exc).__name__) from None
        return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class HttpxTransport(StreamingTransport):
    """HTTP/2 where the server offers it; one httpcore pool per proxy (None: direct)."""

    name = "httpx"
    errors = (
        httpcore.TimeoutException,
        httpcore.NetworkError,
        httpcore.ProtocolError,
        httpcore.ProxyError,
        httpcore.UnsupportedProtocol,
    )

    def _configure(self, settings: Settings) -> None:
        self._tls: ssl.SSLContext = tls_context(settings)
        limits = self.limits
        self._timeouts = {
            "connect": limits.connect_timeout,
            "read": limits.read_timeout,
            "write": limits.read_timeout,
            "pool": None,  # DOWNLOAD_TIMEOUT bounds the wait for a connection
        }
        self._pools: dict[str | None, list[httpcore.AsyncConnectionPool]] = {}
        self._shards = max(1, -(-limits.pool_size // _SHARD))
        self._turn = 0
        self._peers: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
        self._backend = _ResolvingBackend(self.resolver)

    async def _stop(self) -> None:
        pools, self._pools = self._pools, {}
        for shards in pools.values():
            for pool in shards:
                await pool.aclose()

    def _pool(self, proxy: str | None) -> httpcore.AsyncConnectionPool:
        shards = self._pools.get(proxy)
        if shards is None:
            via = None
            if proxy is not None:
                url, auth = split_proxy(proxy)
                via = httpcore.Proxy(url, auth=auth)
            size = -(-self.limits.pool_size // self._shards)
            shards = self._pools[proxy] = [
                httpcore.AsyncConnectionPool(
                    ssl_context=self._tls,
                    max_connections=size,
                    http1=True,
                    http2=True,
                    proxy=via,
                    network_backend=self._backend,
                )
                for _ in range(self._shards)
            ]
        self._turn += 1
        return shards[self._turn % len(shards)]

    @asynccontextmanager
    async def _send(self, request: Request, proxy: str | None) -> AsyncIterator[Head]:
        url = request.parsed_url  # the very URL the scope check judged: no second parse
        target = httpcore.URL(
            scheme=url.scheme.encode("ascii"),
            host=(url.raw_host or "").encode("ascii"),
            port=url.explicit_port,
            target=(url.raw_path_qs or "/").encode("ascii"),
        )
        headers = [(name, value) for name, values in request.headers.items() for value in values]
        async with self._pool(proxy).stream(
            request.method.encode("ascii"),
            target,
            headers=headers,
            content=request.body or None,
            extensions={"timeout": self._timeouts},
        ) as resp:
            raw_headers: list[tuple[bytes, bytes]] = resp.headers
            version = resp.extensions.get("http_version", b"HTTP/1.1")
            stream = resp.extensions.get("network_stream")
            peer = self._peer(stream) if stream is not None else None
            yield Head(
                status=resp.status,
                headers=CIMultiDict(
                    (name.decode("latin-1"), value.decode("utf-8", "surrogateescape"))
                    for name, value in raw_headers
                ),
                headers_size=sum(len(name) + len(value) for name, value in raw_headers),
                protocol=version.decode("ascii"),
                ip_address=peer,
                raw=_raw(resp),
                cut=_nothing,  # leaving the stream unread closes its connection
            )

    def _peer(self, stream: Any) -> str | None:
        """The server's IP, asked once per connection (anyio builds every attribute of
        the socket on each question)."""
        try:
            return self._peers[stream]
        except KeyError:
            addr = stream.get_extra_info("server_addr")
            peer = self._peers[stream] = addr[0] if addr else None
            return peer

    def _translate(self, exc: BaseException, request: Request, detail: str) -> RequestError:
        if isinstance(exc, _LookupFailed):
            return lookup_failed(request, exc.host, detail)
        if isinstance(exc, httpcore.UnsupportedProtocol):
            return InvalidURL(f"cannot download {request!r}: {detail}", request=request)
        if isinstance(exc, httpcore.ConnectTimeout | httpcore.PoolTimeout):
            return connect_timeout(request, detail)
        if isinstance(exc, httpcore.TimeoutException):
            return read_timeout(request)
        tls = handshake_error(exc, request, detail)
        if tls is not None:
            return tls
        cause = os_cause(exc)
        if isinstance(exc, httpcore.ConnectError | httpcore.ProxyError):
            return connect_failed(request, cause or detail, cause)
        if isinstance(exc, httpcore.RemoteProtocolError) and "buffer too long" in detail:
            return ResponseTooLarge(
                f"{request!r}: response head over h11's limit ({_MAX_HEAD // 1024} KiB); "
                "not downloaded",
                request=request,
            )
        if isinstance(exc, httpcore.ProtocolError):
            return ConnectionLost(f"{request!r}: invalid HTTP response: {detail}", request=request)
        if isinstance(exc, httpcore.NetworkError | OSError):
            return ConnectionLost(
                f"{request!r}: connection lost: {cause or detail}", request=request, cause=cause
            )
        return RequestError(f"cannot send {request!r}: {detail}", request=request)


async def _raw(resp: httpcore.Response) -> AsyncIterator[bytes]:
    """The body as it came; a connection closed or reset before its end is data loss."""
    try:
        async for chunk in resp.aiter_stream():
            yield chunk
    except (httpcore.RemoteProtocolError, httpcore.ReadError) as exc:
        raise TruncatedBody(str(exc) or type(exc).__name__) from None


def _nothing() -> None:
    return None
