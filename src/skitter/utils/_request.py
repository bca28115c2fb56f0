"""A request back from ``Request.to_dict``; Scrapy's request fingerprint."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, Self
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from w3lib.url import canonicalize_url

from skitter.http import Request
from skitter.http.wiring import request_class, spider_method

__all__ = [
    "RequestFingerprinter",
    "RequestFingerprinterProtocol",
    "fingerprint",
    "request_from_dict",
    "request_httprepr",
]


def request_from_dict(d: Mapping[str, Any], *, spider: object | None = None) -> Request:
    """The request ``Request.to_dict`` turned into ``d``: of the class named under
    ``_class`` (one this process defines), with callback and errback names looked up
    as methods of ``spider`` (ValueError for a name that is not one)."""
    cls = request_class(d["_class"]) if "_class" in d else Request
    kwargs = {name: value for name, value in d.items() if name in cls.attributes}
    for role in ("callback", "errback"):
        name = kwargs.get(role)
        if isinstance(name, str):
            method = spider_method(name, spider)
            if method is None:
                raise ValueError(  # Scrapy's words first, then why
                    f"Method {name!r} not found in: {spider!r} ({role} {name!r} is not a "
                    "method of the spider)"
                )
            kwargs[role] = method
    if d.get("taskid") is not None:
        kwargs["taskid"] = d["taskid"]
    return cls(**kwargs)


#: Each request's Scrapy fingerprints, by (headers included, fragment kept, unused):
#: a request is hashed once per way of asking, and forgotten with the request.
_CacheKey = tuple[tuple[bytes, ...] | None, bool, bool]
_fingerprint_cache: WeakKeyDictionary[Request, dict[_CacheKey, bytes]] = WeakKeyDictionary()


def fingerprint(
    request: Request,
    *,
    include_headers: Iterable[str | bytes] | None = None,
    keep_fragments: bool = False,
) -> bytes:
    """Scrapy's request fingerprint, byte for byte: SHA-1 of a JSON object of the method,
    the canonical URL (its fragment only with ``keep_fragments``), the body, and the
    values of the ``include_headers`` named, so a value computed by Scrapy (an HTTP
    cache's key, a saved set of seen requests) matches the one computed here.

    It is not ``Request.fingerprint``, skitter's own identity of a task, which the
    scheduler merges duplicates by and stored jobs are keyed by."""
    names = (
        tuple(sorted(_lower_bytes(name) for name in include_headers)) if include_headers else None
    )
    cache = _fingerprint_cache.setdefault(request, {})
    key = (names, keep_fragments, False)
    value = cache.get(key)
    if value is None:
        value = cache[key] = _scrapy_fingerprint(request, names, keep_fragments)
    return value


def _lower_bytes(name: str | bytes) -> bytes:
    return (name if isinstance(name, bytes) else name.encode()).lower()


def _scrapy_fingerprint(
    request: Request, names: tuple[bytes, ...] | None, keep_fragments: bool
) -> bytes:
    headers: dict[str, list[str]] = {}
    for name in names or ():
        if request.has_headers and name in request.headers:
            headers[name.hex()] = [value.hex() for value in request.headers.getlist(name)]
    data = {
        "method": request.method,
        "url": canonicalize_url(request.url, keep_fragments=keep_fragments),
        "body": request.body.hex(),
        "headers": headers,
    }
    return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).digest()


class RequestFingerprinterProtocol(Protocol):
    """Scrapy's type of a request fingerprinter (``crawler.request_fingerprinter``),
    which plug-ins annotate with."""

    def fingerprint(self, request: Request) -> bytes: ...


class RequestFingerprinter:
    """Scrapy's default ``REQUEST_FINGERPRINTER_CLASS``: ``fingerprint(request)`` as
    above. (skitter's scheduler keys tasks by ``Request.fingerprint`` or ``taskid``.)"""

    @classmethod
    def from_crawler(cls, crawler: object) -> Self:
        return cls(crawler)

    def __init__(self, crawler: object | None = None) -> None:
        self._crawler = crawler

    def fingerprint(self, request: Request) -> bytes:
        return fingerprint(request)


def request_httprepr(request: Request) -> bytes:
    """The raw HTTP/1.1 request ``request`` stands for (for size statistics and
    debugging; not necessarily what a transport puts on the wire)."""
    parts = urlsplit(request.url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    head = f"{request.method} {target} HTTP/1.1\r\nHost: {parts.hostname or ''}\r\n"
    out = head.encode("latin-1", "replace")
    if request.has_headers and request.headers:
        out += request.headers.to_string() + b"\r\n"
    return out + b"\r\n" + request.body
