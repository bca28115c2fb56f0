"""The crawl's TLS policy: one ``ssl.SSLContext``, built once from the settings.

Every transport that speaks TLS takes the same context (the Downloader builds it and
hands it to the HTTP transport; a new transport takes ``Downloader.tls``), so a crawl
has one answer to "is this certificate good enough", whoever downloads.

- DOWNLOAD_VERIFY_CERTIFICATES (Scrapy's name and default, False): whether the server's
  certificate chain and host name are checked against the system's trust store
  (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` choose another, as for every OpenSSL program).
  Off by default, as in Scrapy: a crawler reads public pages, and many sites worth
  crawling have an expired, self-signed or incomplete chain; refusing them would lose
  the page and protect nothing a crawler holds. Turn it on when the connection itself
  must be trusted (credentials, HTTP auth, a login). With it on, a failure is a
  ``TLSCertificateError`` naming OpenSSL's reason (``self-signed certificate``,
  ``certificate has expired``, a host name mismatch); it is not retried.
- DOWNLOAD_TLS_MIN_VERSION / DOWNLOAD_TLS_MAX_VERSION: ``"TLSv1.0"`` ... ``"TLSv1.3"``
  or None (Python's defaults: TLS 1.2 up to the highest OpenSSL has). An unknown name,
  or a minimum above the maximum, is refused when the crawl starts. OpenSSL may still
  refuse versions it was built without (TLS 1.0 and 1.1 on most systems today), as
  Scrapy documents too.
- DOWNLOADER_CLIENT_TLS_CIPHERS: an OpenSSL cipher list (Scrapy's default
  ``"DEFAULT"``); None keeps Python's own list. A list OpenSSL cannot use is refused
  at start.
- DOWNLOAD_CLIENT_CERT / DOWNLOAD_CLIENT_KEY / DOWNLOAD_CLIENT_KEY_PASSWORD (skitter's
  names; Scrapy has no setting for this and asks for a context factory): a PEM client
  certificate (chain) presented to every server that asks for one, its private key
  when it is in a file of its own, and that key's password. A key that needs a
  password and has none is refused at start rather than prompting on the terminal.
"""

from __future__ import annotations

import dataclasses
import ssl
from typing import TYPE_CHECKING

import aiohttp

from skitter.downloader._causes import os_cause, tls_hint
from skitter.exceptions import ConfigError, ConnectError, RequestError, TLSCertificateError
from skitter.settings import View

if TYPE_CHECKING:
    from skitter.http import Request
    from skitter.settings import Settings

__all__ = [
    "TLS_VERSIONS",
    "TlsSettings",
    "certificate_problem",
    "certificate_refused",
    "handshake_error",
    "handshake_failed",
    "tls_context",
    "tls_error",
]

TLS_VERSIONS: dict[str, ssl.TLSVersion] = {
    "TLSv1.0": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}


@dataclasses.dataclass(frozen=True, slots=True)
class TlsSettings(View):
    """The settings the TLS context is built from."""

    download_verify_certificates: bool
    download_tls_min_version: str | None
    download_tls_max_version: str | None
    downloader_client_tls_ciphers: str | None
    download_client_cert: str
    download_client_key: str
    download_client_key_password: str


def tls_context(settings: Settings) -> ssl.SSLContext:
    """The crawl's client context; ConfigError names the setting that cannot work."""
    tls = settings.view(TlsSettings)
    # Python's client defaults (TLS 1.2 and up, its cipher list, host name checks); the
    # trust store is loaded only when used (it takes tens of milliseconds).
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if tls.download_verify_certificates:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    else:
        context.check_hostname = False  # must go first: verify_mode refuses otherwise
        context.verify_mode = ssl.CERT_NONE
    low = _version("DOWNLOAD_TLS_MIN_VERSION", tls.download_tls_min_version)
    high = _version("DOWNLOAD_TLS_MAX_VERSION", tls.download_tls_max_version)
    if low is not None and high is not None and low > high:
        raise ConfigError(
            f"DOWNLOAD_TLS_MIN_VERSION ({tls.download_tls_min_version}) is above "
            f"DOWNLOAD_TLS_MAX_VERSION ({tls.download_tls_max_version}): no version is left"
        )
    try:
        if low is not None:
            context.minimum_version = low
        if high is not None:
            context.maximum_version = high
    except (ValueError, ssl.SSLError) as exc:  # this OpenSSL cannot be told so
        raise ConfigError(f"TLS versions: this OpenSSL refuses the range: {exc}") from None
    if tls.downloader_client_tls_ciphers is not None:
        try:
            context.set_ciphers(tls.downloader_client_tls_ciphers)
        except ssl.SSLError as exc:
            raise ConfigError(
                f"DOWNLOADER_CLIENT_TLS_CIPHERS {tls.downloader_client_tls_ciphers!r}: "
                f"OpenSSL can use none of these ciphers ({exc})"
            ) from None
    if tls.download_client_cert:
        _load_client_cert(context, tls)
    elif tls.download_client_key:
        raise ConfigError("DOWNLOAD_CLIENT_KEY is set but DOWNLOAD_CLIENT_CERT is not")
    return context


def _version(name: str, value: str | None) -> ssl.TLSVersion | None:
    if value is None or value == "":
        return None
    version = TLS_VERSIONS.get(value)
    if version is None:
        raise ConfigError(f"{name} must be one of {', '.join(TLS_VERSIONS)} or None, got {value!r}")
    return version


def _load_client_cert(context: ssl.SSLContext, tls: TlsSettings) -> None:
    password = tls.download_client_key_password

    def ask() -> str:
        # Called by OpenSSL only for an encrypted key: answer, or fail instead of the
        # terminal prompt OpenSSL would otherwise show.
        if not password:
            raise ConfigError("DOWNLOAD_CLIENT_KEY is encrypted: set DOWNLOAD_CLIENT_KEY_PASSWORD")
        return password

    try:
        context.load_cert_chain(tls.download_client_cert, tls.download_client_key or None, ask)
    except ConfigError:
        raise
    except (OSError, ssl.SSLError) as exc:  # SSLError is an OSError; both say it better
        names = "DOWNLOAD_CLIENT_CERT" + (
            " / DOWNLOAD_CLIENT_KEY" if tls.download_client_key else ""
        )
        raise ConfigError(f"{names}: cannot load the client certificate: {exc}") from None


def certificate_problem(exc: BaseException) -> str | None:
    """OpenSSL's reason a server's certificate was refused (``"self-signed
    certificate"``, ``"Hostname mismatch, certificate is not valid for 'x'."``), if
    ``exc`` or an exception it wraps is a verification failure; else None."""
    seen: BaseException | None = exc
    while seen is not None:
        inner = getattr(seen, "certificate_error", None)  # aiohttp's wrapper (a subclass)
        if isinstance(inner, ssl.SSLCertVerificationError):
            seen = inner
        if isinstance(seen, ssl.SSLCertVerificationError):
            return str(getattr(seen, "verify_message", None) or seen.reason or seen)
        seen = seen.__cause__ or seen.__context__
    return None


def tls_error(exc: BaseException, request: Request, detail: str) -> RequestError | None:
    """The skitter error for a failed TLS handshake (``detail``: the masked text of
    ``exc``), None when ``exc`` is not one."""
    if isinstance(exc, aiohttp.ClientSSLError):
        return _refused(exc, request, detail)
    if (
        isinstance(exc, aiohttp.ClientConnectorError)
        and isinstance(exc.os_error, ConnectionResetError | ssl.SSLEOFError)
        and request.url[:6].lower() == "https:"
        and "proxy" not in request.meta  # then the proxy is who reset it
    ):
        # Servers (Python's among them) drop a handshake they refuse without saying why.
        return ConnectError(
            f"{request!r}: TLS handshake failed: the server closed the connection (it may "
            "refuse the TLS versions, ciphers or client certificate offered: "
            "DOWNLOAD_TLS_MIN_VERSION, DOWNLOAD_TLS_MAX_VERSION, DOWNLOADER_CLIENT_TLS_CIPHERS, "
            "DOWNLOAD_CLIENT_CERT)",
            request=request,
        )
    return None


def handshake_error(exc: BaseException, request: Request, detail: str) -> RequestError | None:
    """``tls_error`` for a client that wraps ``ssl``'s errors (httpcore): the handshake
    failed if an ``ssl.SSLError`` is among the causes of ``exc``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return _refused(exc, request, detail)
        seen = seen.__cause__ or seen.__context__
    return None


def _refused(exc: BaseException, request: Request, detail: str) -> RequestError:
    problem = certificate_problem(exc)
    if problem is not None:
        return certificate_refused(request, problem)
    cause = os_cause(exc)
    return handshake_failed(request, cause or detail, cause)


def handshake_failed(request: Request, text: str, cause: str | None) -> ConnectError:
    """A TLS handshake that failed for another reason than the certificate: ``text``
    says why, with a hint when the server seems to speak plain HTTP."""
    return ConnectError(
        f"{request!r}: TLS handshake failed: {text}{tls_hint(text)}", request=request, cause=cause
    )


def certificate_refused(request: Request, problem: str) -> TLSCertificateError:
    return TLSCertificateError(
        f"{request!r}: certificate verify failed: {problem} (DOWNLOAD_VERIFY_CERTIFICATES is on)",
        request=request,
    )
