"""Cache policies: which requests and responses are cached, and when an entry may be
served without asking the server again. Scrapy's two, with its names and rules.

``DummyPolicy`` caches everything (but HTTPCACHE_IGNORE_SCHEMES and
HTTPCACHE_IGNORE_HTTP_CODES) and serves every entry as fresh: a replay of a site, for
developing a spider offline. ``RFC2616Policy`` follows HTTP caching: freshness from
``Cache-Control: max-age``, else ``Expires``, else a tenth of the time since
``Last-Modified`` (the heuristic browsers use), permanent redirects forever; a stale
entry is revalidated with ``If-None-Match`` / ``If-Modified-Since``, and so is one whose
response said ``no-cache`` (which asks for exactly that, not for not storing); a 304
means the entry is still good, and so does a 5xx unless it said ``must-revalidate``.
``no-store`` is never stored.

A policy is built with the crawl's settings (Scrapy's signature) and reads the time
from the crawl's clock when it has one (``from_crawler``), so tests can age entries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from email.utils import parsedate_to_datetime
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter.exceptions import ConfigError
from skitter.extensions.httpcache._entry import STORED_AT
from skitter.http import Request, Response
from skitter.settings import HttpCacheSettings, Settings

__all__ = ["DummyPolicy", "RFC2616Policy", "parse_cache_control", "parse_http_date"]

#: A year: how long a permanent redirect without freshness information stays fresh.
MAXAGE = 3600 * 24 * 365


def _scheme(request: Request) -> str:
    url = request.url
    return url[: url.index(":")].lower()


def _codes(settings: Settings) -> frozenset[int]:
    values = settings.view(HttpCacheSettings).httpcache_ignore_http_codes
    try:
        return frozenset(int(code) for code in values)
    except (TypeError, ValueError):
        raise ConfigError(
            f"HTTPCACHE_IGNORE_HTTP_CODES must list statuses, got {values!r}"
        ) from None


class DummyPolicy:
    """Stores everything and serves every entry without asking the server."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        own = settings.view(HttpCacheSettings)
        self.ignore_schemes = frozenset(s.lower() for s in own.httpcache_ignore_schemes)
        self.ignore_http_codes = _codes(settings)

    @classmethod
    def from_crawler(cls, crawler: Any) -> DummyPolicy:
        return cls(crawler.settings, crawler.clock)

    def should_cache_request(self, request: Request) -> bool:
        return _scheme(request) not in self.ignore_schemes

    def should_cache_response(self, response: Response, request: Request) -> bool:
        return response.status not in self.ignore_http_codes

    def is_cached_response_fresh(self, cachedresponse: Response, request: Request) -> bool:
        return True

    def is_cached_response_valid(
        self, cachedresponse: Response, response: Response, request: Request
    ) -> bool:
        return True


def parse_cache_control(values: Iterable[str], ignore: Iterable[str] = ()) -> dict[str, str | None]:
    """``Cache-Control`` directives (every header line) as ``{directive: value or None}``,
    directive names in lower case, quotes around values removed."""
    skip = {name.lower() for name in ignore}
    out: dict[str, str | None] = {}
    for line in values:
        for part in line.split(","):
            name, sep, value = part.strip().partition("=")
            name = name.strip().lower()
            if name and name not in skip:
                out[name] = value.strip().strip('"') if sep else None
    return out


def parse_http_date(value: str | None) -> float | None:
    """An HTTP-date as epoch seconds, or None when absent or unreadable."""
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    try:
        return when.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _date_of(cachedresponse: Response, request: Request, now: float) -> float:
    """When the cached response was made: its ``Date``, else the time the storage says
    it was stored (``STORED_AT``), else now (an entry from a storage that does not say)."""
    date = parse_http_date(cachedresponse.header("Date"))
    if date is not None:
        return date
    stored = request.meta.get(STORED_AT) if request.meta else None
    return float(stored) if isinstance(stored, int | float) else now


def _max_age(cc: dict[str, str | None], name: str = "max-age") -> int | None:
    try:
        return max(0, int(cc[name] or ""))
    except (KeyError, ValueError):
        return None


class RFC2616Policy:
    """HTTP caching rules (RFC 2616 as Scrapy reads it, with Firefox's heuristics)."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        own = settings.view(HttpCacheSettings)
        self.always_store = bool(own.httpcache_always_store)
        self.ignore_schemes = frozenset(s.lower() for s in own.httpcache_ignore_schemes)
        self.ignore_response_cache_controls = tuple(
            str(d) for d in own.httpcache_ignore_response_cache_controls
        )
        self.clock: Clock = clock or SystemClock()

    @classmethod
    def from_crawler(cls, crawler: Any) -> RFC2616Policy:
        return cls(crawler.settings, crawler.clock)

    def _request_cc(self, request: Request) -> dict[str, str | None]:
        if not request.has_headers:
            return {}
        return parse_cache_control(request.headers.text_list("Cache-Control"))

    def _response_cc(self, response: Response) -> dict[str, str | None]:
        return parse_cache_control(
            response.header_list("Cache-Control"), self.ignore_response_cache_controls
        )

    def should_cache_request(self, request: Request) -> bool:
        if _scheme(request) in self.ignore_schemes:
            return False
        return "no-store" not in self._request_cc(request)

    def should_cache_response(self, response: Response, request: Request) -> bool:
        cc = self._response_cc(response)
        if "no-store" in cc or response.status == 304:
            return False  # a 304 has no body of its own to serve later
        if self.always_store or "max-age" in cc or response.header("Expires") is not None:
            return True
        if response.status in (300, 301, 308):
            return True
        if response.status in (200, 203, 401):
            return any(response.header(name) is not None for name in ("Last-Modified", "ETag"))
        return False

    def is_cached_response_fresh(self, cachedresponse: Response, request: Request) -> bool:
        cc = self._response_cc(cachedresponse)
        ccreq = self._request_cc(request)
        if "no-cache" not in cc and "no-cache" not in ccreq:
            now = self.clock.time()
            date = _date_of(cachedresponse, request, now)
            lifetime = self._freshness_lifetime(cachedresponse, date)
            age = self._current_age(cachedresponse, date, now)
            asked = _max_age(ccreq)
            if asked is not None:
                lifetime = min(lifetime, asked)
            if age < lifetime:
                return True
            if "max-stale" in ccreq and "must-revalidate" not in cc:
                stale = ccreq["max-stale"]
                if stale is None:
                    return True  # any staleness is acceptable to this request
                tolerance = _max_age(ccreq, "max-stale")
                if tolerance is not None and age < lifetime + tolerance:
                    return True
        self._set_conditional_validators(request, cachedresponse)
        return False

    def is_cached_response_valid(
        self, cachedresponse: Response, response: Response, request: Request
    ) -> bool:
        if response.status >= 500 and "must-revalidate" not in self._response_cc(cachedresponse):
            return True  # a server error does not replace what it failed to revalidate
        return response.status == 304

    @staticmethod
    def _set_conditional_validators(request: Request, cachedresponse: Response) -> None:
        headers = cachedresponse.headers
        if "Last-Modified" in headers:
            request.headers["If-Modified-Since"] = headers["Last-Modified"]
        if "ETag" in headers:
            request.headers["If-None-Match"] = headers["ETag"]

    def _freshness_lifetime(self, response: Response, date: float) -> float:
        max_age = _max_age(self._response_cc(response))
        if max_age is not None:
            return max_age
        expires_header = response.header("Expires")
        if expires_header is not None:
            expires = parse_http_date(expires_header)
            # An unreadable Expires means "already expired" (RFC 2616 §14.21).
            return max(0.0, expires - date) if expires is not None else 0.0
        last_modified = parse_http_date(response.header("Last-Modified"))
        if last_modified is not None and last_modified <= date:
            return (date - last_modified) / 10
        if response.status in (300, 301, 308):
            return MAXAGE
        return 0.0

    @staticmethod
    def _current_age(response: Response, date: float, now: float) -> float:
        age = max(0.0, now - date)
        try:
            header_age = float(response.header("Age") or "")
        except ValueError:
            return age
        return max(age, header_age) if math.isfinite(header_age) else age
