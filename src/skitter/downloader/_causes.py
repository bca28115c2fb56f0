"""What a failed download's cause was, in the words of the OS or the TLS library.

Client libraries wrap the error that says what happened in errors of their own, whose
text is often less useful: aiohttp's "Cannot connect to host ... [Connect call failed]"
hides the errno that says "Connection refused", httpx's "All connection attempts
failed" hides it a cause or two down, libcurl's message is framed in curl_cffi's
boilerplate. The transports name the cause from here, so that every failure line, the
task's record and the stats say what a person can act on, whatever the transport.

A cause is short and holds no host, port or URL (``os.strerror``'s words, OpenSSL's
reason, libcurl's last words), so that failures can be counted by it.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
from typing import TYPE_CHECKING

from skitter.exceptions import ConnectError, DNSLookupError, DownloadTimeout

if TYPE_CHECKING:
    from skitter.http import Request

__all__ = [
    "connect_failed",
    "connect_timeout",
    "curl_cause",
    "curl_detail",
    "lookup_failed",
    "os_cause",
    "read_timeout",
    "tls_hint",
    "took_too_long",
]

#: OpenSSL's (and BoringSSL's) reasons for a TLS handshake answered in plain HTTP.
_PLAIN_HTTP = ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "HTTP_REQUEST")
_SSL_LOCATION = re.compile(r"\s*\(_ssl\.c:\d+\)$")
_CURL_FRAME = re.compile(r"^Failed to perform, curl: \(\d+\) ")
_CURL_SEE = re.compile(r"\.? See https://curl\.se/\S* first for more details\.$")


def os_cause(exc: BaseException) -> str | None:
    """The OS's or OpenSSL's words for what ``exc`` (or an error it wraps, through
    ``__cause__``, ``__context__`` and exception groups) says: ``"Connection
    refused"``, ``"Name or service not known"``, ``"[SSL: WRONG_VERSION_NUMBER] wrong
    version number"``; None when none of them is an OS or TLS error that says."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        error = todo.pop(0)
        if id(error) in seen:
            continue
        seen.add(id(error))
        cause = _own_words(error)
        if cause is not None:
            return cause
        if isinstance(error, BaseExceptionGroup):
            todo.extend(error.exceptions)
        todo.extend(e for e in (error.__cause__, error.__context__) if e is not None)
        inner = getattr(error, "os_error", None)  # aiohttp keeps it here
        if isinstance(inner, BaseException):
            todo.append(inner)
    return None


def _own_words(error: BaseException) -> str | None:
    if isinstance(error, ssl.SSLError):
        text = _SSL_LOCATION.sub("", str(error.args[1]) if len(error.args) > 1 else str(error))
        return text or None
    if isinstance(error, socket.gaierror):
        return error.strerror or None
    if isinstance(error, OSError) and error.errno:
        try:
            return os.strerror(error.errno)
        except ValueError:
            return None
    return None


def connect_failed(request: Request, text: str, cause: str | None) -> ConnectError:
    """The error for a connection that could not be made (``text`` says why), to the
    request's host or to the proxy it goes through."""
    to = " to its proxy" if request.meta.get("proxy") else ""
    return ConnectError(f"{request!r}: cannot connect{to}: {text}", request=request, cause=cause)


def lookup_failed(request: Request, host: str, reason: str) -> DNSLookupError:
    """The error for a host name that did not resolve (``reason``: the resolver's)."""
    return DNSLookupError(
        f"{request!r}: DNS lookup of {host!r} failed: {reason}", request=request, cause=reason
    )


def connect_timeout(request: Request, detail: str) -> DownloadTimeout:
    return DownloadTimeout(
        f"{request!r}: connect timeout ({detail})", request=request, cause="connect timeout"
    )


def read_timeout(request: Request) -> DownloadTimeout:
    return DownloadTimeout(
        f"{request!r}: read timeout: the server sent nothing for too long",
        request=request,
        cause="read timeout",
    )


def took_too_long(request: Request, total: float | None) -> DownloadTimeout:
    """The error for an exchange longer than DOWNLOAD_TIMEOUT (``total`` seconds)."""
    return DownloadTimeout(
        f"{request!r}: download took longer than {total} seconds",
        request=request,
        cause="download timeout",
    )


def tls_hint(cause: str) -> str:
    """What to add to a failed handshake's ``cause`` for the person reading it: a TLS
    client answered in plain HTTP is the usual reason for OpenSSL's complaint."""
    if any(reason in cause for reason in _PLAIN_HTTP):
        return " — is this port plain HTTP? (an https:// URL to a server that speaks http://)"
    return ""


def curl_detail(text: str) -> str:
    """libcurl's message without curl_cffi's frame ("Failed to perform, curl: (7) ...
    See https://curl.se/... for more details.")."""
    return _CURL_SEE.sub("", _CURL_FRAME.sub("", text)).strip()


def curl_cause(text: str) -> str:
    """The cause in libcurl's message: its last words ("Failed to connect to h port 1
    after 0 ms: Could not connect to server" -> "Could not connect to server"), which
    hold no host or port."""
    return curl_detail(text).rsplit(": ", 1)[-1]
