"""The ``curl`` transport: curl_cffi (curl-impersonate), a browser's TLS and HTTP/2 fingerprint.

Chosen by DOWNLOAD_TRANSPORT = "curl" or ``meta["transport"] = "curl"``; the extra
``skitter[impersonate]`` installs it. Each request's TLS ClientHello and HTTP/2
settings are those of the browser profile ``meta["impersonate"]`` names, else
DOWNLOAD_IMPERSONATE (default ``"chrome"``, curl_cffi's latest Chrome): ``chrome``,
``firefox``, ``safari``, ``edge`` or a versioned target such as ``chrome131``. An
unknown profile is refused at start (the setting) or fails the request (the meta key).

Only the fingerprint is the browser's: the request carries exactly the headers the
middlewares gave it (no default browser headers), so set USER_AGENT and
DEFAULT_REQUEST_HEADERS to the browser's too when a site checks them.

What the profile fixes, the settings cannot change: a crawl that sets
DOWNLOAD_TLS_MIN_VERSION, DOWNLOAD_TLS_MAX_VERSION or a DOWNLOADER_CLIENT_TLS_CIPHERS
other than ``"DEFAULT"`` is refused when this transport is built. DOWNLOAD_VERIFY_CERTIFICATES
and the client certificate settings hold; a verified certificate is checked against
``SSL_CERT_FILE`` when set, else curl_cffi's bundled trust store.

libcurl keeps no cookies (``discard_cookies``; CookiesMiddleware sends them), follows
no redirect, decodes nothing (HTTP_CONTENT_DECODING off: skitter's bounded decoder
does), and reads no proxy from the environment; host names are looked up by the
crawl's resolver and pinned with CURLOPT_RESOLVE (a proxy resolves them itself).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from curl_cffi import CurlError, CurlOpt
from curl_cffi.const import CurlECode
from curl_cffi.requests import AsyncSession
from curl_cffi.requests import utils as curl_utils
from curl_cffi.requests.impersonate import resolve_latest_browser_type
from multidict import CIMultiDict

from skitter.downloader._causes import (
    connect_failed,
    curl_cause,
    curl_detail,
    lookup_failed,
)
from skitter.downloader._decode import TruncatedBody
from skitter.downloader._streaming import Head, StreamingTransport, split_proxy
from skitter.downloader._tls import (
    TlsSettings,
    certificate_refused,
    handshake_failed,
    tls_context,
)
from skitter.exceptions import (
    ConfigError,
    ConnectionLost,
    DNSLookupError,
    DownloadTimeout,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import Request, url_host
from skitter.settings import DownloaderSettings

if TYPE_CHECKING:
    from skitter.settings import Settings

__all__ = ["CurlTransport", "known_profile"]

# libcurl's CURLINFO_HTTP_VERSION answers.
_PROTOCOLS = {1: "HTTP/1.0", 2: "HTTP/1.1", 3: "HTTP/2", 30: "HTTP/3"}
# Codes that mean the body stopped before its end, once the head has come.
_BODY_LOST = frozenset(
    {CurlECode.PARTIAL_FILE, CurlECode.RECV_ERROR, CurlECode.HTTP2, CurlECode.HTTP2_STREAM}
)

_TLS_FAILED = frozenset(
    {
        CurlECode.SSL_CONNECT_ERROR,
        CurlECode.SSL_CIPHER,
        CurlECode.SSL_CERTPROBLEM,
        CurlECode.SSL_CLIENTCERT,
    }
)


def known_profile(name: object) -> bool:
    """Whether curl_cffi can impersonate the browser profile ``name``."""
    if not isinstance(name, str):
        return False
    target = resolve_latest_browser_type(name)  # type: ignore[no-untyped-call]
    return target in curl_utils.NATIVE_TARGET_NAMES


# curl_cffi takes libcurl options per session only; these are per request (the pinned
# address), so the session's options read this request's, set in its task's context
# right before the (synchronous) setup of its handle.
_OPTIONS: ContextVar[Mapping[CurlOpt, Any]] = ContextVar(
    "skitter_curl_options", default=MappingProxyType({})
)


class _RequestOptions(dict[CurlOpt, Any]):
    """The session's ``curl_options``: the ones of the request being set up."""

    def __len__(self) -> int:
        return len(_OPTIONS.get())

    def items(self) -> Any:
        return _OPTIONS.get().items()


class CurlTransport(StreamingTransport):
    """A browser's fingerprint per request, through one curl_cffi session."""

    name = "curl"
    errors = (CurlError,)

    def _configure(self, settings: Settings) -> None:
        self.profile: str = settings.view(DownloaderSettings).download_impersonate
        if not known_profile(self.profile):
            raise ConfigError(
                f"DOWNLOAD_IMPERSONATE {self.profile!r}: not a browser profile curl_cffi "
                "knows (chrome, firefox, safari, edge, or a version such as chrome131)"
            )
        tls = settings.view(TlsSettings)
        fixed = [
            name
            for name, value in (
                ("DOWNLOAD_TLS_MIN_VERSION", tls.download_tls_min_version),
                ("DOWNLOAD_TLS_MAX_VERSION", tls.download_tls_max_version),
            )
            if value
        ]
        if tls.downloader_client_tls_ciphers not in (None, "DEFAULT"):
            fixed.append("DOWNLOADER_CLIENT_TLS_CIPHERS")
        if fixed:
            raise ConfigError(
                f"the curl transport impersonates a browser, whose TLS versions and ciphers "
                f"are the profile's: unset {', '.join(fixed)} or use another transport"
            )
        # The client certificate, its key and the key's password are checked at start,
        # as for every transport: a file that is missing or locked fails here, not at
        # the first handshake.
        tls_context(settings)
        self._verify: bool = tls.download_verify_certificates
        self._cert: str | tuple[str, str] | None = None
        self._options: dict[CurlOpt, Any] = {
            CurlOpt.HTTP_CONTENT_DECODING: 0,  # raw bytes: skitter's decoder is bounded
            CurlOpt.MAXREDIRS: 0,
        }
        trust = os.environ.get("SSL_CERT_FILE")
        if self._verify and trust:
            self._options[CurlOpt.CAINFO] = trust
            self._options[CurlOpt.PROXY_CAINFO] = trust
        if tls.download_client_cert:
            self._cert = (
                (tls.download_client_cert, tls.download_client_key)
                if tls.download_client_key
                else tls.download_client_cert
            )
            if tls.download_client_key_password:
                self._options[CurlOpt.KEYPASSWD] = tls.download_client_key_password
        limits = self.limits
        if limits.connect_timeout:
            self._options[CurlOpt.CONNECTTIMEOUT_MS] = int(limits.connect_timeout * 1000)
        if limits.read_timeout:  # less than a byte a second for that long: a stalled read
            self._options[CurlOpt.LOW_SPEED_LIMIT] = 1
            self._options[CurlOpt.LOW_SPEED_TIME] = max(1, round(limits.read_timeout))
        self._session: AsyncSession[Any] | None = None

    async def _start(self) -> None:
        self._session = AsyncSession(
            max_clients=self.limits.pool_size,
            discard_cookies=True,  # cookies are CookiesMiddleware's job
            trust_env=False,  # environment proxies are HttpProxyMiddleware's job
            allow_redirects=False,  # redirects are RedirectMiddleware's job
        )
        # Set after: the constructor would take an (empty at this point) mapping for none.
        self._session.curl_options = _RequestOptions()

    async def _stop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _pin(self, request: Request, proxy: str | None) -> dict[CurlOpt, Any]:
        """The options for this request: the crawl's answer for the host, pinned."""
        url = request.parsed_url
        host = url.raw_host or ""
        try:
            ipaddress.ip_address(host)
            literal = True
        except ValueError:
            literal = False
        if proxy is not None or literal or not host:
            return self._options
        try:
            address = (await self.resolver.resolve(host))[0]
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise lookup_failed(request, url_host(request.url), reason) from None
        if ":" in address:
            address = f"[{address}]"
        return {**self._options, CurlOpt.RESOLVE: [f"{host}:{url.port}:{address}"]}

    @asynccontextmanager
    async def _send(self, request: Request, proxy: str | None) -> AsyncIterator[Head]:
        session = self._session
        assert session is not None
        profile = request.meta.get("impersonate") or self.profile
        if not known_profile(profile):
            raise InvalidURL(
                f"cannot download {request!r}: meta['impersonate'] {profile!r} is not a "
                "browser profile curl_cffi knows",
                request=request,
            )
        _OPTIONS.set(await self._pin(request, proxy))
        auth = None
        if proxy is not None and "@" in proxy:  # the credentials as skitter reads them
            proxy, auth = split_proxy(proxy)
        resp = await session.request(
            request.method,  # type: ignore[arg-type]
            str(request.parsed_url),  # the URL the scope check judged, sent as it is
            headers=request.headers.text_items(),
            data=request.body or None,
            stream=True,
            impersonate=profile,  # type: ignore[arg-type]
            default_headers=False,
            accept_encoding=None,
            quote=False,
            proxy=proxy,
            proxy_auth=auth,
            verify=self._verify,
            cert=self._cert,
            timeout=None,  # DOWNLOAD_TIMEOUT is the transport's (asyncio), the rest options
            allow_redirects=False,
            discard_cookies=True,
        )
        try:
            pairs = [
                (name.decode("latin-1"), (value or b"").decode("utf-8", "surrogateescape"))
                for name, value in resp.headers.raw
            ]
            yield Head(
                status=resp.status_code,
                headers=CIMultiDict(pairs),
                headers_size=sum(len(name) + len(value) for name, value in pairs),
                protocol=_PROTOCOLS.get(resp.http_version, "HTTP/1.1"),
                ip_address=resp.primary_ip or None,
                raw=_raw(resp),
                cut=resp.quit_now.set if resp.quit_now is not None else _nothing,
            )
        finally:
            if resp.quit_now is not None:
                resp.quit_now.set()  # a body left unread is not downloaded to its end
            await resp.aclose()

    def _translate(self, exc: BaseException, request: Request, detail: str) -> RequestError:
        code = getattr(exc, "code", 0)
        text = curl_detail(detail)  # libcurl's words, without curl_cffi's frame
        if code == CurlECode.COULDNT_RESOLVE_HOST:
            return DNSLookupError(
                f"{request!r}: DNS lookup failed: {text}",
                request=request,
                cause="Could not resolve host",
            )
        if code in (CurlECode.UNSUPPORTED_PROTOCOL, CurlECode.URL_MALFORMAT):
            return InvalidURL(f"cannot download {request!r}: {text}", request=request)
        if code == CurlECode.OPERATION_TIMEDOUT:
            return DownloadTimeout(
                f"{request!r}: timeout ({text})", request=request, cause=curl_cause(detail)
            )
        if "Too large response headers" in detail:
            return ResponseTooLarge(
                f"{request!r}: response headers over libcurl's limit (300 KiB); not downloaded",
                request=request,
            )
        if code == CurlECode.PEER_FAILED_VERIFICATION:
            return certificate_refused(request, text)
        if code in _TLS_FAILED:
            return handshake_failed(request, text, curl_cause(detail))
        if code == CurlECode.COULDNT_RESOLVE_PROXY:
            return connect_failed(request, text, "Could not resolve proxy")
        if code in (CurlECode.COULDNT_CONNECT, CurlECode.PROXY) or "CONNECT" in detail:
            return connect_failed(request, text, curl_cause(detail))
        if isinstance(exc, CurlError | OSError):
            cause = curl_cause(detail)
            return ConnectionLost(
                f"{request!r}: connection lost: {text}", request=request, cause=cause
            )
        return RequestError(f"cannot send {request!r}: {text}", request=request)


async def _raw(resp: Any) -> AsyncIterator[bytes]:
    """The body as it came; a transfer that stops before its end is data loss."""
    try:
        async for chunk in resp.aiter_content():
            yield chunk
    except CurlError as exc:
        if getattr(exc, "code", 0) in _BODY_LOST:
            raise TruncatedBody(str(exc)) from None
        raise


def _nothing() -> None:
    return None
