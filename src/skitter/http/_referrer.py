"""Referrer policies: what ``Referer`` a request found on a page sends, by the W3C rules.

Scrapy's names and classes. REFERRER_POLICY picks the crawl's policy (a W3C name, or
``scrapy-default``, or the import path of a ``ReferrerPolicy`` subclass; Scrapy's own
import paths name the same classes here, so a ported ``settings.py`` keeps working);
REFERRER_POLICIES adds names or, with None, removes them. Per link, in Scrapy's order:
``meta["referrer_policy"]`` of the new request, else the ``Referrer-Policy`` header of
the page it was found on (a comma list: the last name known wins, as the W3C says;
import paths are never taken from a server), else the crawl's policy. A name in meta
or a header that is not known is logged once and the crawl's policy applies.

This module sits in ``skitter.http`` because two layers that may not import each other
use it: the spider middleware that sets ``Referer`` on links, and the redirect
middlewares that set it again for the page a redirect goes to.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from skitter._components import load_object
from skitter.exceptions import ConfigError
from skitter.settings import SpiderSettings

if TYPE_CHECKING:
    from skitter.http._request import Request
    from skitter.http._response import Response
    from skitter.settings import Settings

__all__ = [
    "DefaultReferrerPolicy",
    "NoReferrerPolicy",
    "NoReferrerWhenDowngradePolicy",
    "OriginPolicy",
    "OriginWhenCrossOriginPolicy",
    "ReferrerPolicies",
    "ReferrerPolicy",
    "SameOriginPolicy",
    "StrictOriginPolicy",
    "StrictOriginWhenCrossOriginPolicy",
    "UnsafeUrlPolicy",
]

logger = logging.getLogger("skitter.referrer")

_LOCAL_SCHEMES = ("about", "blob", "data", "filesystem")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCRAPY_PATH = "scrapy.spidermiddlewares.referer."


class ReferrerPolicy:
    """A W3C referrer policy. Subclasses define ``referrer``; ``bind`` lets the hot
    path do the per-page work once for all the links of a page."""

    name: ClassVar[str] = ""
    #: Pages at these schemes never send a Referer.
    NOREFERRER_SCHEMES: ClassVar[tuple[str, ...]] = _LOCAL_SCHEMES

    def referrer(self, response_url: str, request_url: str) -> str | None:
        """The ``Referer`` for ``request_url`` found on ``response_url``; None: none."""
        raise NotImplementedError

    def bind(self, response_url: str) -> Callable[[str], str | None]:
        """``referrer`` with ``response_url`` fixed: one call per link."""
        return lambda request_url: self.referrer(response_url, request_url)

    def stripped_referrer(self, url: str) -> str | None:
        return None if _scheme(url) in self.NOREFERRER_SCHEMES else strip_url(url)

    def origin_referrer(self, url: str) -> str | None:
        return None if _scheme(url) in self.NOREFERRER_SCHEMES else strip_url(url, True)

    @staticmethod
    def tls_protected(url: str) -> bool:
        return _scheme(url) in ("https", "ftps")

    def potentially_trustworthy(self, url: str) -> bool:
        return self.tls_protected(url)

    def _downgrade(self, response_url: str, request_url: str) -> bool:
        return self.tls_protected(response_url) and not self.potentially_trustworthy(request_url)


class NoReferrerPolicy(ReferrerPolicy):
    """Never a Referer."""

    name = "no-referrer"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        return None


class NoReferrerWhenDowngradePolicy(ReferrerPolicy):
    """The full URL, except from an https page to an http URL."""

    name = "no-referrer-when-downgrade"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        if self._downgrade(response_url, request_url):
            return None
        return self.stripped_referrer(response_url)

    def bind(self, response_url: str) -> Callable[[str], str | None]:
        # The crawl's default: one strip per page, a prefix test per link.
        referrer = self.stripped_referrer(response_url)
        if referrer is None:
            return lambda request_url: None
        if not self.tls_protected(response_url):
            return lambda request_url: referrer
        trustworthy = self.potentially_trustworthy
        return lambda request_url: referrer if trustworthy(request_url) else None


class SameOriginPolicy(ReferrerPolicy):
    """The full URL to the same origin, nothing elsewhere."""

    name = "same-origin"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        if strip_url(response_url, True) == strip_url(request_url, True):
            return self.stripped_referrer(response_url)
        return None


class OriginPolicy(ReferrerPolicy):
    """The origin (``scheme://host[:port]/``) of the page, to every URL."""

    name = "origin"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        return self.origin_referrer(response_url)


class StrictOriginPolicy(ReferrerPolicy):
    """The origin, except from an https page to an http URL."""

    name = "strict-origin"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        if self._downgrade(response_url, request_url):
            return None
        return self.origin_referrer(response_url)


class OriginWhenCrossOriginPolicy(ReferrerPolicy):
    """The full URL to the same origin, the origin elsewhere."""

    name = "origin-when-cross-origin"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        origin = strip_url(response_url, True)
        if origin == strip_url(request_url, True):
            return self.stripped_referrer(response_url)
        return self.origin_referrer(response_url)


class StrictOriginWhenCrossOriginPolicy(ReferrerPolicy):
    """The full URL to the same origin, the origin elsewhere, nothing on a downgrade
    (browsers' default today)."""

    name = "strict-origin-when-cross-origin"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        if strip_url(response_url, True) == strip_url(request_url, True):
            return self.stripped_referrer(response_url)
        if self._downgrade(response_url, request_url):
            return None
        return self.origin_referrer(response_url)


class UnsafeUrlPolicy(ReferrerPolicy):
    """The full URL to every URL, also from https to http: it leaks what https hides."""

    name = "unsafe-url"

    def referrer(self, response_url: str, request_url: str) -> str | None:
        return self.stripped_referrer(response_url)


class DefaultReferrerPolicy(NoReferrerWhenDowngradePolicy):
    """Scrapy's default: no-referrer-when-downgrade, and nothing from ``file:`` or
    ``s3:`` pages (local paths and bucket names are not for servers to see)."""

    name = "scrapy-default"
    NOREFERRER_SCHEMES = (*_LOCAL_SCHEMES, "file", "s3")


_BUILTIN: tuple[type[ReferrerPolicy], ...] = (
    NoReferrerPolicy,
    NoReferrerWhenDowngradePolicy,
    SameOriginPolicy,
    OriginPolicy,
    StrictOriginPolicy,
    OriginWhenCrossOriginPolicy,
    StrictOriginWhenCrossOriginPolicy,
    UnsafeUrlPolicy,
    DefaultReferrerPolicy,
)


def _scheme(url: str) -> str:
    return url.partition(":")[0].lower()


def _default_port(url: str) -> bool:
    """Whether the authority of ``url`` may end in a default port (a quick, loose test)."""
    start = url.find("//") + 2
    end = len(url)
    for mark in "/?":
        found = url.find(mark, start)
        if found != -1:
            end = min(end, found)
    return url.endswith((":80", ":443"), start, end)


def strip_url(url: str, origin_only: bool = False) -> str | None:
    """``url`` as a referrer (W3C "strip url"): no credentials, no fragment, no default
    port; with ``origin_only`` also no path and query (then the path is ``/``)."""
    if not url:
        return None
    if not origin_only and "#" not in url and "@" not in url and not _default_port(url):
        return url  # nothing to strip: the common case, once per page
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port == _DEFAULT_PORTS.get(scheme):
        netloc = netloc.rpartition(":")[0]
    if origin_only:
        return urlunsplit((scheme, netloc, "/", "", ""))
    return urlunsplit((scheme, netloc, parts.path, parts.query, ""))


def _load(path: str) -> type[ReferrerPolicy]:
    if path.startswith(_SCRAPY_PATH):
        for cls in _BUILTIN:
            if cls.__name__ == path[len(_SCRAPY_PATH) :]:
                return cls
    try:
        cls = load_object(path)
    except Exception as exc:
        raise ConfigError(f"cannot load referrer policy {path!r}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, ReferrerPolicy)):
        raise ConfigError(f"referrer policy {path!r} is not a ReferrerPolicy subclass")
    return cls


class ReferrerPolicies:
    """The crawl's policies (REFERRER_POLICY, REFERRER_POLICIES) and the choice of one
    per link."""

    def __init__(
        self,
        default: object = "scrapy-default",
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        policies: dict[str, type[ReferrerPolicy]] = {cls.name: cls for cls in _BUILTIN}
        policies[""] = NoReferrerWhenDowngradePolicy  # the W3C's empty policy
        for name, path in (extra or {}).items():
            if path is None:
                policies.pop(name.lower(), None)
            else:
                policies[name.lower()] = path if isinstance(path, type) else _load(str(path))
        self._policies = policies
        self._instances: dict[type[ReferrerPolicy], ReferrerPolicy] = {}
        self._warned: set[str] = set()
        self.default: ReferrerPolicy = self._instance(self._configured(default))

    def _configured(self, default: object) -> type[ReferrerPolicy]:
        if isinstance(default, type) and issubclass(default, ReferrerPolicy):
            return default
        if not isinstance(default, str):
            raise ConfigError(
                f"REFERRER_POLICY must be a policy name, an import path or a ReferrerPolicy "
                f"subclass, got {default!r}"
            )
        cls = self._named(default)
        if cls is not None:
            return cls
        if "." not in default:
            raise ConfigError(
                f"REFERRER_POLICY {default!r} is not a referrer policy; use one of "
                + ", ".join(sorted(repr(n) for n in self._policies if n))
                + " or the import path of a ReferrerPolicy subclass"
            )
        return _load(default)

    @classmethod
    def from_settings(cls, settings: Settings) -> ReferrerPolicies | None:
        """The crawl's policies; None when REFERER_ENABLED is off."""
        own = settings.view(SpiderSettings)
        if not own.referer_enabled:
            return None
        return cls(own.referrer_policy, own.referrer_policies)

    def _instance(self, cls: type[ReferrerPolicy]) -> ReferrerPolicy:
        policy = self._instances.get(cls)
        if policy is None:
            policy = self._instances[cls] = cls()
        return policy

    def _named(self, value: str) -> type[ReferrerPolicy] | None:
        """The last known name of a comma list (the W3C header rule), or None."""
        for name in reversed(value.lower().split(",")):
            cls = self._policies.get(name.strip())
            if cls is not None:
                return cls
        return None

    def _lookup(self, value: Any, where: str) -> ReferrerPolicy:
        if isinstance(value, type) and issubclass(value, ReferrerPolicy):
            return self._instance(value)
        cls = self._named(str(value))
        if cls is None and where == "meta" and "." in str(value):
            cls = _load(str(value))  # the spider's own code, so trusted with a path
        if cls is None:
            if str(value) not in self._warned:
                self._warned.add(str(value))
                logger.warning(
                    "Unknown referrer policy %r in %s; using %s", value, where, self.default.name
                )
            return self.default
        return self._instance(cls)

    def for_response(self, response: Response) -> ReferrerPolicy:
        """The policy for links on ``response`` that name none in their meta."""
        header = response.header("Referrer-Policy")
        if header is None:
            return self.default
        return self._lookup(header, "the Referrer-Policy header")

    def for_request(self, request: Request, page: ReferrerPolicy) -> ReferrerPolicy:
        """``request``'s own ``meta["referrer_policy"]``, else ``page``'s policy."""
        value = request.meta.get("referrer_policy")
        if value is None:
            return page
        return self._lookup(value, "meta")

    def referrer(self, response: Response, request: Request) -> str | None:
        """The ``Referer`` of ``request``, found on (or sent on by) ``response``."""
        policy = self.for_request(request, self.for_response(response))
        return policy.referrer(response.url, request.url)
