"""Scrapy's ``scrapy.http.cookies``: a standard-library cookie jar that takes skitter's
Request and Response, for plug-ins and tests that keep cookies themselves.

``http.cookiejar`` speaks urllib's request and response interfaces; ``WrappedRequest``
and ``WrappedResponse`` present a Request and a Response that way, and ``CookieJar``
wraps a ``http.cookiejar.CookieJar`` to do the wrapping for its caller. skitter's own
cookie handling (CookiesMiddleware) keeps its jars elsewhere; this module is for code
written against Scrapy's jar.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from http.cookiejar import Cookie, CookiePolicy, DefaultCookiePolicy
from http.cookiejar import CookieJar as _StdlibJar
from typing import Any
from urllib.parse import urlsplit

from skitter.http._request import Request
from skitter.http._response import Response

__all__ = ["CookieJar", "WrappedRequest", "WrappedResponse"]


def _text(value: bytes | str) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", errors="replace")


class WrappedRequest:
    """A Request as ``urllib.request.Request`` looks to ``http.cookiejar``: headers the
    jar adds (``Cookie``) go into the Request's own headers."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self._parts = urlsplit(request.url)

    def get_full_url(self) -> str:
        return self.request.url

    def get_host(self) -> str:
        return self._parts.netloc

    def get_type(self) -> str:
        return self._parts.scheme

    def is_unverifiable(self) -> bool:
        """Whether the user did not ask for this request (RFC 2965's "unverifiable"):
        ``meta["is_unverifiable"]``, which a redirect or an embedded resource sets."""
        return bool(self.request.meta.get("is_unverifiable", False))

    def get_origin_req_host(self) -> str:
        return self._parts.hostname or ""

    @property
    def full_url(self) -> str:
        return self.get_full_url()

    @property
    def host(self) -> str:
        return self.get_host()

    @property
    def type(self) -> str:
        return self.get_type()

    @property
    def unverifiable(self) -> bool:
        return self.is_unverifiable()

    @property
    def origin_req_host(self) -> str:
        return self.get_origin_req_host()

    def has_header(self, name: str) -> bool:
        return name in self.request.headers

    def get_header(self, name: str, default: str | None = None) -> str | None:
        value = self.request.headers.get(name)
        return default if value is None else _text(value)

    def header_items(self) -> list[tuple[str, list[str]]]:
        headers = self.request.headers
        return [(_text(name), [_text(v) for v in headers.getlist(name)]) for name in headers]

    def add_unredirected_header(self, name: str, value: str) -> None:
        self.request.headers[name] = value


class WrappedResponse:
    """A Response as ``http.client.HTTPResponse`` looks to ``http.cookiejar``: its
    ``info()`` is itself, and ``get_all`` gives a header's values as text."""

    def __init__(self, response: Response) -> None:
        self.response = response

    def info(self) -> WrappedResponse:
        return self

    def get_all(self, name: str, default: Any = None) -> Any:
        values = self.response.headers.getlist(name)
        return [_text(v) for v in values] if values else default


class CookieJar:
    """``http.cookiejar.CookieJar`` (``.jar``) fed skitter's Requests and Responses.

    Expired cookies are dropped every ``check_expired_frequency`` requests the jar adds
    a ``Cookie`` header to (``processed`` counts them), so a long crawl's jar does not
    keep every cookie it ever saw."""

    def __init__(
        self, policy: CookiePolicy | None = None, check_expired_frequency: int = 10000
    ) -> None:
        self.policy: CookiePolicy = policy or DefaultCookiePolicy()
        self.jar = _StdlibJar(self.policy)
        self.check_expired_frequency = check_expired_frequency
        self.processed = 0

    def extract_cookies(self, response: Response, request: Request) -> None:
        self.jar.extract_cookies(WrappedResponse(response), WrappedRequest(request))  # type: ignore[arg-type]

    def add_cookie_header(self, request: Request) -> None:
        self.jar.add_cookie_header(WrappedRequest(request))  # type: ignore[arg-type]
        self.processed += 1
        if self.processed % self.check_expired_frequency == 0:
            self.jar.clear_expired_cookies()

    @property
    def _cookies(self) -> dict[str, Any]:
        """The jar's cookies by domain, then path, then name (Scrapy's attribute)."""
        cookies: dict[str, Any] = self.jar._cookies  # type: ignore[attr-defined]
        return cookies

    def clear_session_cookies(self) -> None:
        self.jar.clear_session_cookies()

    def clear(
        self, domain: str | None = None, path: str | None = None, name: str | None = None
    ) -> None:
        self.jar.clear(domain, path, name)

    def __iter__(self) -> Iterator[Cookie]:
        return iter(self.jar)

    def __len__(self) -> int:
        return len(self.jar)

    def set_policy(self, policy: CookiePolicy) -> None:
        self.policy = policy
        self.jar.set_policy(policy)

    def make_cookies(self, response: Response, request: Request) -> Sequence[Cookie]:
        return self.jar.make_cookies(WrappedResponse(response), WrappedRequest(request))  # type: ignore[arg-type]

    def set_cookie(self, cookie: Cookie) -> None:
        self.jar.set_cookie(cookie)

    def set_cookie_if_ok(self, cookie: Cookie, request: Request) -> None:
        self.jar.set_cookie_if_ok(cookie, WrappedRequest(request))  # type: ignore[arg-type]
