"""HttpAuthMiddleware: HTTP Basic credentials, sent to one domain only (Scrapy's).

Credentials come from the HTTPAUTH_USER / HTTPAUTH_PASS / HTTPAUTH_DOMAIN settings
(Scrapy 2.17), or from the spider's ``http_user`` / ``http_pass`` / ``http_auth_domain``
attributes, which win when set (older Scrapy spiders carry them). A request whose
host is the domain or one of its subdomains gets ``Authorization: Basic ...``, unless
it has an ``Authorization`` header already; every other request goes without.

The domain is matched against the host *and the port*, as Scrapy does (it compares the
URL's ``host[:port]`` with the domain): ``example.com`` is that host and its subdomains
on the default port of the URL's scheme (80 for http, 443 for https), so a link or a
redirect to ``example.com:8080`` (another server, perhaps another owner) gets no
credentials; ``example.com:8443`` is that host and its subdomains on port 8443 only.

The domain must be named whenever credentials are: HTTPAUTH_DOMAIN set (None means
every domain, on purpose), or the ``http_auth_domain`` attribute present. Scrapy 2.5 to
2.12 guessed the domain of the first request instead; Scrapy 2.13 refuses a spider
without it, and so does skitter, at start: a guess is how credentials leak. The domain
is written as an ``allowed_domains`` entry is (``skitter.http.Scope``), and an IP
address is that address only (no subdomains).

Scrapy's per-request ``meta["http_user"]`` / ``meta["http_pass"]`` are refused: meta is
stored with the request (the job database, Redis), and a password must not be. So the
middleware stays in the chain without credentials, to refuse them loudly rather than
let them go unsent; ``HttpAuthMiddleware()`` is that middleware, and Scrapy's
``spider_opened(spider)`` takes the spider's attributes. A
redirect to another origin drops the header (RedirectMiddleware); this middleware then
adds it again only if the new URL is in the domain. The credentials are never logged
nor shown: HTTPAUTH_PASS is masked like every ``*_PASS`` setting, and the header is
never stored (``http._codec``).
"""

from __future__ import annotations

import warnings
from typing import Any

from w3lib.http import basic_auth_header

from skitter._types import CrawlContext
from skitter.exceptions import ConfigError, RequestError, ScrapyDeprecationWarning
from skitter.http import Request, Scope
from skitter.http.wiring import HELD_HEADERS, parse_entry
from skitter.settings import DownloaderSettings

__all__ = ["HttpAuthMiddleware"]

_MISSING = object()


class HttpAuthMiddleware:
    """Adds Basic credentials to the requests of one domain (and its subdomains)."""

    __slots__ = ("_default_port_only", "_header", "_scope")

    def __init__(self, user: str = "", password: str = "", domain: str | None = None) -> None:
        self._header: str | None = None
        self._scope: Scope | None = None
        self._default_port_only = False
        if user or password:
            self._credentials(user, password, domain)

    def _credentials(self, user: str, password: str, domain: str | None) -> None:
        self._header = basic_auth_header(user, password).decode("ascii")
        HELD_HEADERS.derive("Authorization", self._header)  # made again, never stored
        #: None: every domain (HTTPAUTH_DOMAIN = None, asked for explicitly).
        self._scope = None if domain is None else Scope([domain])
        #: A domain without a port is for the scheme's default port only (Scrapy's).
        self._default_port_only = self._scope is not None and self._scope.entries[0].port is None

    def spider_opened(self, spider: Any) -> None:
        """Scrapy's hook: the spider's ``http_user`` / ``http_pass`` (deprecated there),
        which need ``http_auth_domain`` (AttributeError without it, as in Scrapy)."""
        user = getattr(spider, "http_user", "") or ""
        password = getattr(spider, "http_pass", "") or ""
        if not (user or password):
            return
        warnings.warn(
            "the http_user / http_pass spider attributes are deprecated in Scrapy; use "
            "HTTPAUTH_USER, HTTPAUTH_PASS and HTTPAUTH_DOMAIN",
            ScrapyDeprecationWarning,
            stacklevel=2,
        )
        if not hasattr(spider, "http_auth_domain"):
            raise AttributeError(
                "the spider sets http_user/http_pass but not http_auth_domain: set it to "
                "the domain the credentials are for (or to None for every domain)"
            )
        domain = _domain("http_auth_domain", spider.http_auth_domain)
        self._credentials(str(user), str(password), domain)

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpAuthMiddleware:
        spider = crawler.spider
        user = getattr(spider, "http_user", "") or ""
        password = getattr(spider, "http_pass", "") or ""
        if user or password:
            domain = getattr(spider, "http_auth_domain", _MISSING)
            if domain is _MISSING:
                raise ConfigError(
                    f"spider {getattr(spider, 'name', spider)!r} sets http_user/http_pass "
                    "but not http_auth_domain: set it to the domain the credentials are for "
                    "(or to None to send them to every domain)"
                )
            return cls(str(user), str(password), _domain("http_auth_domain", domain))
        settings = crawler.settings
        own = settings.view(DownloaderSettings)
        user, password = own.httpauth_user or "", own.httpauth_pass or ""
        if not (user or password):
            return cls()  # no credentials: there to refuse meta["http_user"]
        if settings.source("HTTPAUTH_DOMAIN") == "default":
            raise ConfigError(
                "HTTPAUTH_USER/HTTPAUTH_PASS are set but HTTPAUTH_DOMAIN is not: set it to "
                "the domain the credentials are for (or to None to send them to every domain)"
            )
        return cls(user, password, _domain("HTTPAUTH_DOMAIN", own.httpauth_domain))

    def process_request(self, request: Request, spider: Any = None) -> None:
        meta = request.meta
        if meta and ("http_user" in meta or "http_pass" in meta):
            raise RequestError(
                f"{request!r}: meta['http_user'] / meta['http_pass'] are not supported "
                "(meta is stored with the request); use HTTPAUTH_USER, HTTPAUTH_PASS and "
                "HTTPAUTH_DOMAIN, or an Authorization header",
                request=request,
            )
        if self._header is None or (request.has_headers and "Authorization" in request.headers):
            return
        scope = self._scope
        if scope is not None:
            url = request.parsed_url
            if not scope.allows(url) or (self._default_port_only and not url.is_default_port()):
                return
        request.headers["Authorization"] = self._header

    def __repr__(self) -> str:
        if self._header is None:
            return "<HttpAuthMiddleware without credentials>"
        where = "every domain" if self._scope is None else str(self._scope.entries[0])
        return f"<HttpAuthMiddleware for {where}>"


def _domain(name: str, value: Any) -> str | None:
    """The domain, checked as an allowed_domains entry; ConfigError if unusable."""
    if value is None:
        return None
    try:
        entry, reduced = parse_entry(value)
    except ValueError as exc:
        raise ConfigError(f"{name} {value!r} is not a usable domain ({exc})") from None
    if reduced:
        raise ConfigError(f"{name} takes a host name (or host:port), not {value!r}")
    return str(entry)
