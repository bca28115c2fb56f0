"""LOG_VERSIONS: the versions of the components a run uses, logged once at start.

A bug report that quotes the start of the log then says which lxml, parsel or Python
parsed the pages. Names are distribution names (as ``pip`` knows them), read from the
installed metadata, plus the few that are not distributions: ``libxml2`` (the C
library lxml is built with), ``Python``, ``Platform`` and ``pyOpenSSL`` (with the OpenSSL
it links), as in Scrapy. Only read when the crawl starts, never per request.
"""

from __future__ import annotations

import platform
import pprint
import ssl
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

from skitter._version import __version__

__all__ = ["component_version", "start_lines", "versions_line"]


def component_version(name: str) -> str:
    """The version of ``name``, or ``"not installed"`` (a name listed for a component the
    project does not use is reported, not a reason to refuse the crawl)."""
    key = name.lower()
    if key == "python":
        return sys.version.replace("\n", "- ")
    if key == "platform":
        return platform.platform()
    if key == "libxml2":
        from lxml import etree  # only when asked: lxml is large

        return ".".join(str(part) for part in etree.LIBXML_VERSION)
    if key == "pyopenssl":
        return _pyopenssl()
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _pyopenssl() -> str:
    """pyOpenSSL's version with its OpenSSL's, as Scrapy shows it; else the OpenSSL that
    Python's own ``ssl`` module links."""
    try:
        from OpenSSL import SSL  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return f"not installed ({ssl.OPENSSL_VERSION})"
    library = SSL.SSLeay_version(SSL.SSLEAY_VERSION).decode("ascii", "replace")
    return f"{version('pyOpenSSL')} ({library})"


def versions_line(names: Iterable[str]) -> str | None:
    """The message of the start's versions line (``Versions:`` and the components, laid
    out as Scrapy lays them out), or None when LOG_VERSIONS is empty."""
    found = {name: component_version(name) for name in names}
    if not found:
        return None
    return "Versions:\n" + pprint.pformat(found, sort_dicts=False)


def start_lines(bot_name: str, spider_name: str, log_versions: Iterable[str]) -> list[str]:
    """The lines a crawl logs as it starts: who started, then the versions (if any)."""
    started = f"skitter {__version__} started (bot: {bot_name}, spider: {spider_name})"
    line = versions_line(log_versions)
    return [started] if line is None else [started, line]
