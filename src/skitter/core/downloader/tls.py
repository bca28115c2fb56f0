"""Scrapy's ``scrapy.core.downloader.tls``: TLS version names, for Twisted TLS code.

skitter's downloader makes its TLS contexts with the standard library (``DOWNLOAD_TLS_MIN_VERSION``
and the other TLS settings, ``skitter.downloader``); it has no Twisted TLS client. What
lives here is for code that builds *Twisted* TLS endpoints with Scrapy's helpers, such as
the test servers of Scrapy-era projects: ``_TWISTED_VERSION_MAP``, from the version names
Scrapy's settings use (``"TLSv1.2"``) to Twisted's ``TLSVersion`` constants. It is made
when first read, so importing this module never needs Twisted; reading it without
Twisted installed raises ``ImportError`` naming what is missing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TLS_VERSION_NAMES"]

#: The TLS version names Scrapy's settings take, oldest first.
TLS_VERSION_NAMES = ("TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3")


def _twisted_versions() -> dict[str, Any]:
    try:
        from twisted.internet.ssl import TLSVersion
    except ImportError as exc:
        raise ImportError(
            "scrapy.core.downloader.tls._TWISTED_VERSION_MAP maps to Twisted's TLS "
            f"versions and needs Twisted (with pyOpenSSL) installed: {exc}"
        ) from exc
    return {name: getattr(TLSVersion, name.replace(".", "_")) for name in TLS_VERSION_NAMES}


def __getattr__(name: str) -> Any:
    if name == "_TWISTED_VERSION_MAP":
        return _twisted_versions()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
