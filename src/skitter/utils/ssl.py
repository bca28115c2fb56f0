"""Scrapy's ``scrapy.utils.ssl``: its helper for Twisted's ``CertificateOptions``.

skitter's own TLS is the standard library's (``ssl.SSLContext``, see
``skitter.downloader``). The helper here serves code that still builds Twisted TLS
servers or clients the way Scrapy's helpers let it (the test servers of Scrapy-era
projects): the keyword arguments that bound the TLS versions of a ``CertificateOptions``.
Twisted is imported only when it is called.
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []


def _twisted_maximum_is_off_by_one() -> bool:
    """Twisted before 26.4 treats ``lowerMaximumSecurityTo`` as one version lower than
    the one passed (twisted/twisted#12638), so the next version up must be passed."""
    import twisted

    major, minor = (int(part) for part in twisted.__version__.split(".")[:2])
    return (major, minor) < (26, 4)


def _get_cert_options_version_kwargs(min_version: Any, max_version: Any) -> dict[str, Any]:
    """``CertificateOptions`` keywords for TLS versions from ``min_version`` to
    ``max_version`` (Twisted ``TLSVersion`` constants; None leaves Twisted's default).

    Twisted takes either ``raiseMinimumTo`` or ``insecurelyLowerMinimumTo``, not both:
    which one depends on where the wanted minimum is against Twisted's own default."""
    from twisted.internet.ssl import CertificateOptions, TLSVersion

    kwargs: dict[str, Any] = {}
    if max_version:
        if _twisted_maximum_is_off_by_one():
            versions = list(TLSVersion.iterconstants())
            position = versions.index(max_version) + 1
            if position >= len(versions):
                raise ValueError(
                    f"Twisted {_twisted_version()} cannot cap TLS at {max_version.name} "
                    "(its off-by-one cap, fixed in Twisted 26.4)"
                )
            max_version = versions[position]
        kwargs["lowerMaximumSecurityTo"] = max_version
    if min_version:
        default = CertificateOptions._defaultMinimumTLSVersion
        if min_version < default:
            kwargs["insecurelyLowerMinimumTo"] = min_version
        elif min_version > default:
            kwargs["raiseMinimumTo"] = min_version
    return kwargs


def _twisted_version() -> str:
    import twisted

    return str(twisted.__version__)
