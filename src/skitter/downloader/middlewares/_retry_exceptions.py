"""RETRY_EXCEPTIONS: which download errors RetryMiddleware retries (Scrapy's setting).

Empty (skitter's default) means every ``TransportError``: a connection refused or
reset, a DNS failure, a timeout. A list names exception classes or dotted paths to them;
Scrapy's default list names Twisted's errors, which skitter never raises, so each of
those names is read as skitter's error of the same meaning (a ported ``settings.py``
that spells Scrapy's list out keeps its meaning). A name that is neither is imported,
and one that is no exception class stops the crawl at start.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skitter._components import load_object
from skitter.exceptions import (
    ConfigError,
    ConnectError,
    ConnectionLost,
    DNSLookupError,
    DownloadTimeout,
    TransportError,
)

__all__ = ["retry_exceptions"]

_TWISTED = "twisted.internet.error."
#: Scrapy's default RETRY_EXCEPTIONS, read as skitter's errors of the same meaning.
SCRAPY_NAMES: dict[str, type[BaseException]] = {
    "twisted.internet.defer.TimeoutError": DownloadTimeout,
    _TWISTED + "TimeoutError": DownloadTimeout,
    _TWISTED + "TCPTimedOutError": DownloadTimeout,
    _TWISTED + "DNSLookupError": DNSLookupError,
    _TWISTED + "ConnectionRefusedError": ConnectError,
    _TWISTED + "ConnectError": ConnectError,
    _TWISTED + "ConnectionDone": ConnectionLost,
    _TWISTED + "ConnectionLost": ConnectionLost,
    "twisted.web.client.ResponseFailed": ConnectionLost,
    "scrapy.core.downloader.handlers.http11.TunnelError": ConnectError,
    "IOError": OSError,
    "builtins.IOError": OSError,
    "builtins.OSError": OSError,
}


def retry_exceptions(value: Iterable[Any] | None) -> tuple[type[BaseException], ...]:
    """The classes RETRY_EXCEPTIONS names (``(TransportError,)`` when it names none)."""
    if not value:
        return (TransportError,)
    if isinstance(value, str):
        raise ConfigError(f"RETRY_EXCEPTIONS is a list of exception classes, not {value!r}")
    found: list[type[BaseException]] = []
    for spec in value:
        cls = SCRAPY_NAMES.get(spec) if isinstance(spec, str) else None
        if cls is None:
            cls = load_object(spec)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise ConfigError(f"RETRY_EXCEPTIONS: {spec!r} is not an exception class")
        found.append(cls)
    return tuple(dict.fromkeys(found))
