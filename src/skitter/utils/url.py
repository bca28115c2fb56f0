"""Scrapy's ``scrapy.utils.url``: domain and extension checks, scheme guessing and
stripping a URL down (credentials, default port, fragment, path); ``canonicalize_url``
is w3lib's, which Scrapy re-exports here too (plug-ins import it from this path)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import any_to_uri, canonicalize_url, parse_url

from skitter.http import in_domain
from skitter.http.wiring import add_http_if_no_scheme

__all__ = [
    "add_http_if_no_scheme",
    "canonicalize_url",
    "guess_scheme",
    "strip_url",
    "url_has_any_extension",
    "url_is_from_any_domain",
    "url_is_from_spider",
]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
# A path as a shell would take it: absolute, ./ ../ or ~/ on POSIX; a drive letter,
# a UNC share or a \\?\ path on Windows.
_POSIX_PATH = re.compile(r"^(/.|\.{1,2}/|~/|\.[^./]+/)")
_WINDOWS_PATH = re.compile(r"^([a-z]:\\|\\\\)", re.IGNORECASE)


def url_is_from_any_domain(url: Any, domains: Iterable[str]) -> bool:
    """Whether the URL's host is one of ``domains`` or below one of them."""
    host = parse_url(url).netloc.lower()
    return bool(host) and any(in_domain(f"http://{host}/", d.lower()) for d in domains)


def url_is_from_spider(url: Any, spider: Any) -> bool:
    """Whether the URL belongs to the spider: its name or its ``allowed_domains``."""
    domains = [spider.name, *(getattr(spider, "allowed_domains", None) or ())]
    return url_is_from_any_domain(url, domains)


def url_has_any_extension(url: Any, extensions: Iterable[str]) -> bool:
    """Whether the URL's path ends in one of ``extensions`` (given with their dot)."""
    extension = posixpath.splitext(parse_url(url).path)[1].lower()
    return extension in set(extensions)


def _is_filesystem_path(string: str) -> bool:
    return bool(_POSIX_PATH.match(string) or _WINDOWS_PATH.match(string))


def guess_scheme(url: str) -> str:
    """A file:// URI for what looks like a file path, else ``add_http_if_no_scheme``
    (what ``skitter shell`` and ``fetch`` make of an argument)."""
    if _is_filesystem_path(url):
        return str(any_to_uri(url))
    return add_http_if_no_scheme(url)


def strip_url(
    url: str,
    strip_credentials: bool = True,
    strip_default_port: bool = True,
    origin_only: bool = False,
    strip_fragment: bool = True,
) -> str:
    """``url`` without credentials, the scheme's default port and the fragment (each
    kept on request); ``origin_only`` also drops the path (then ``/``) and the query."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if (strip_credentials or origin_only) and "@" in netloc:
        netloc = netloc.rpartition("@")[2]
    port = parts.port
    if strip_default_port and port is not None and port == _DEFAULT_PORTS.get(parts.scheme):
        netloc = netloc.rpartition(":")[0]
    if origin_only:
        return urlunsplit((parts.scheme, netloc, "/", "", ""))
    fragment = "" if strip_fragment else parts.fragment
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, fragment))
