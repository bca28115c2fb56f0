"""Playwright's errors, as skitter's: what a failed page means for the crawl.

A page that died with its browser, or failed on the network, is a retryable
``TransportError`` (the scheduler retries it); a URL the browser refuses is an
``InvalidURL``; a page the browser aborted (a download, say) is a plain
``RequestError``, and headers larger than Chromium accepts a ``ResponseTooLarge``, both
not retried. Chromium reports network failures as ``net::ERR_*`` codes
in the message, which is what is matched here. Every message names the request.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from skitter.exceptions import (
    ConnectError,
    ConnectionLost,
    DownloadTimeout,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import Request

if TYPE_CHECKING:
    from skitter.downloader.browser._pool import PageLease

__all__ = ["is_playwright_error", "timed_out", "translate"]

_NET_ERROR = re.compile(r"net::(ERR_[A-Z0-9_]+)")
_CONNECT_ERRORS = ("REFUSED", "NAME_NOT_RESOLVED", "ADDRESS_UNREACHABLE", "CONNECTION_FAILED")
_TLS_ERRORS = ("ERR_SSL", "ERR_CERT")
_DEAD_BROWSER = ("has been closed", "browser closed", "target closed", "crashed")


def is_playwright_error(exc: BaseException) -> bool:
    """True for Playwright's errors, told apart without importing Playwright."""
    return type(exc).__module__.startswith("playwright.")


def timed_out(request: Request, wait_until: str, timeout: float | None) -> DownloadTimeout:
    selector = request.meta.get("browser_wait_for")
    waited = f"{wait_until!r}" + (f" and selector {selector!r}" if selector else "")
    return DownloadTimeout(
        f"{request!r}: the page did not reach {waited} within {timeout} seconds",
        request=request,
    )


def translate(
    exc: Exception, request: Request, lease: PageLease | None, timeout: float | None
) -> RequestError:
    """The skitter error for a Playwright error; the message names the request."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    text = str(exc).strip()
    detail = text.splitlines()[0] if text else type(exc).__name__
    lowered = text.lower()
    if (lease is not None and not lease.browser_alive) or any(s in lowered for s in _DEAD_BROWSER):
        return ConnectionLost(
            f"{request!r}: the browser died while rendering the page ({detail})", request=request
        )
    if isinstance(exc, PlaywrightTimeout):
        return timed_out(request, request.meta.get("browser_wait_until") or "load", timeout)
    match = _NET_ERROR.search(text)
    code = match.group(1) if match else ""
    if code:
        if any(part in code for part in _CONNECT_ERRORS) or code.startswith(_TLS_ERRORS):
            return ConnectError(f"{request!r}: cannot connect: {code}", request=request)
        if "TIMED_OUT" in code:
            return DownloadTimeout(f"{request!r}: {code}", request=request)
        if code in ("ERR_INVALID_URL", "ERR_UNSAFE_PORT", "ERR_DISALLOWED_URL_SCHEME"):
            return InvalidURL(f"cannot render {request!r}: {code}", request=request)
        if code == "ERR_RESPONSE_HEADERS_TOO_BIG":
            return ResponseTooLarge(
                f"{request!r}: response headers larger than the browser accepts ({code}); "
                "not downloaded",
                request=request,
            )
        if code in ("ERR_ABORTED", "ERR_BLOCKED_BY_CLIENT"):
            message = f"{request!r}: the browser aborted the page ({code})"
            return RequestError(message, request=request)
        return ConnectionLost(f"{request!r}: {code}", request=request)
    if "download is starting" in lowered:
        return RequestError(
            f"{request!r}: the URL is a file download, not a page; fetch it without render",
            request=request,
        )
    return ConnectionLost(f"{request!r}: the browser failed: {detail}", request=request)
