"""The crawl's scope: which URLs it may download, from ``spider.allowed_domains``.

Scope is security (no request may leave the allowed domains), so one ``Scope``
judges every URL of a crawl, wherever it comes from: links (the spider middleware, to
drop them early), and every download (the Downloader's guard, robots.txt, rendered
pages). It is sans-I/O: a value built once per spider (``Scope.of``), with caches.
``allowed_domains`` is read then, when the crawl is built (a spider may set it in
``__init__``); changing it later changes nothing.

Entries of ``allowed_domains``:

- ``example.com``: that host and its subdomains, on every port (Scrapy's rule);
- ``example.com:8080``: the same, on port 8080 only;
- IP literals, ``127.0.0.1``, ``::1``, ``[::1]``, ``[::1]:8080``, ``2001:db8::1``: that
  address only (no "subdomains"), on every port or the one given. ``localhost`` and
  ``127.0.0.1`` are different hosts, as they are different strings in a URL;
- a URL given by mistake (``https://example.com/shop``) is reduced to its host (and
  the port it names), ``*.example.com`` to ``example.com``, each with a warning;
- anything else (empty, ``127.1``, a bad port, a space...) is unusable: it matches
  nothing and is reported with a WARNING when the scope is built. ``allowed_domains``
  whose every entry is unusable refuses everything; it never allows everything.

An empty ``allowed_domains`` is no restriction (as in Scrapy) on hosts. Schemes: http
and https are in scope; ``data:`` and ``file:`` (``LOCAL_SCHEMES``, answered without the
network, ``file:`` from the crawling machine's disk) only when the spider lists them in
``allowed_schemes`` (``{"data", "file"}``) or the request has ``meta["allow_offsite"]``,
whatever ``allowed_domains`` says: they have no host to judge. ``admits`` applies that
rule to every download; ``allows`` judges hosts (and passes allowed local URLs).

URLs are read with yarl, the parser aiohttp sends with, never with a look-alike: the
Downloader's guard judges ``request.parsed_url`` and the transport sends that very
object, so no URL can read one way to the check and another way to the transport
(backslashes, ``@`` in odd places, percent-encoded or IDNA hosts, trailing dots, IPv6
brackets, userinfo). Verdicts are cached per (scheme, host, port). ``allows_url`` takes
a string (links, and URLs a browser serialized): it caches by the text up to the end
of the authority, which decides the host and port by itself, and parses only on a miss.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from yarl import URL

from skitter.exceptions import ConfigError

if TYPE_CHECKING:
    from skitter.http._request import Request

__all__ = ["LOCAL_SCHEMES", "SCHEMES", "Scope"]

log = logging.getLogger("skitter.scope")

SCHEMES = frozenset({"http", "https"})
LOCAL_SCHEMES = frozenset({"data", "file"})
_CACHE_LIMIT = 100_000  # verdicts kept per cache; a crawl of many hosts starts over
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")
_OF: weakref.WeakKeyDictionary[Any, Scope] = weakref.WeakKeyDictionary()


class Entry(NamedTuple):
    """One usable ``allowed_domains`` entry."""

    host: str  # lower-case ASCII (IDNA) name without a trailing dot, or a canonical IP
    port: int | None  # None: every port
    is_ip: bool

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and self.port is not None else self.host
        return host if self.port is None else f"{host}:{self.port}"


class Scope:
    """The hosts (and ports) a crawl may download from; see the module docstring."""

    __slots__ = (
        "__weakref__",
        "_by_host",
        "_by_prefix",
        "_host_ports",
        "_hosts",
        "_suffix_ports",
        "_suffixes",
        "entries",
        "problems",
        "restricted",
        "schemes",
    )

    def __init__(
        self, allowed_domains: Iterable[Any] | str | None = (), *, schemes: Iterable[str] = SCHEMES
    ) -> None:
        raw: list[Any]
        if isinstance(allowed_domains, str):
            log.warning(
                "allowed_domains should be a list of hosts, not a string: using [%r]",
                allowed_domains,
            )
            raw = [allowed_domains]
        else:
            raw = list(allowed_domains or ())
        #: False for an empty ``allowed_domains``: every host is in scope.
        self.restricted = bool(raw)
        self.schemes = frozenset(schemes)
        entries: list[Entry] = []
        problems: list[str] = []
        for item in raw:
            try:
                entry, reduced = parse_entry(item)
            except ValueError as exc:
                problems.append(
                    f"allowed_domains entry {item!r} is unusable ({exc}): it allows nothing"
                )
                continue
            if reduced:
                log.warning(
                    "allowed_domains takes host names (or host:port), not %s: using %r for %r",
                    reduced,
                    str(entry),
                    item,
                )
            entries.append(entry)
        if self.restricted and not entries:
            problems.append("allowed_domains has no usable entry: every request is offsite")
        for problem in problems:
            log.warning("%s", problem)
        #: The usable entries, normalized; ``problems``: what was wrong with the others.
        self.entries: tuple[Entry, ...] = tuple(entries)
        self.problems: tuple[str, ...] = tuple(problems)
        self._hosts = frozenset(e.host for e in entries if e.port is None)
        self._host_ports = frozenset((e.host, e.port) for e in entries if e.port is not None)
        self._suffixes = tuple(f".{e.host}" for e in entries if e.port is None and not e.is_ip)
        self._suffix_ports = tuple(
            (f".{e.host}", e.port) for e in entries if e.port is not None and not e.is_ip
        )
        self._by_host: dict[tuple[str, str | None, int | None], bool] = {}
        self._by_prefix: dict[str, bool] = {}

    @classmethod
    def of(cls, spider: Any) -> Scope:
        """The scope of ``spider``, built on first use from its ``allowed_domains`` and
        the same object afterwards: every component of a crawl judges with one scope,
        and unusable entries are reported once, when the crawl is built."""
        if spider is None:
            return cls()
        try:
            scope = _OF.get(spider)
        except TypeError:  # not weakly referable: build one each time
            return cls._of(spider)
        if scope is None:
            scope = _OF[spider] = cls._of(spider)
        return scope

    @classmethod
    def _of(cls, spider: Any) -> Scope:
        extra = getattr(spider, "allowed_schemes", None) or ()
        if isinstance(extra, str):
            extra = (extra,)
        schemes = {str(scheme).lower().removesuffix(":") for scheme in extra}
        unknown = schemes - SCHEMES - LOCAL_SCHEMES
        if unknown:
            raise ConfigError(
                f"allowed_schemes: skitter downloads {', '.join(sorted(SCHEMES | LOCAL_SCHEMES))}"
                f", not {', '.join(sorted(unknown))}"
            )
        return cls(getattr(spider, "allowed_domains", None), schemes=SCHEMES | schemes)

    # -- judging --------------------------------------------------------------------------
    def allows(self, url: URL) -> bool:
        """Whether a download of ``url`` stays in scope: one dict lookup once the host
        has been seen."""
        if not self.restricted:
            return True
        key = (url.scheme, url.raw_host, url.port)
        verdict = self._by_host.get(key)
        if verdict is None:
            if len(self._by_host) >= _CACHE_LIMIT:
                self._by_host.clear()
            verdict = self._by_host[key] = self._judge(*key)
        return verdict

    def allows_url(self, url: str) -> bool | None:
        """``allows`` for a URL string; None when yarl cannot parse it (the caller
        decides: a link goes on to fail as InvalidURL, a browser request is refused)."""
        if not self.restricted:
            return True
        prefix = _authority_prefix(url)
        verdict = self._by_prefix.get(prefix)
        if verdict is None:
            try:
                parsed = URL(url)
            except Exception:  # ValueError, and IndexError for some bracket misuse
                return None
            if len(self._by_prefix) >= _CACHE_LIMIT:
                self._by_prefix.clear()
            verdict = self._by_prefix[prefix] = self.allows(parsed)
        return verdict

    def admits(self, request: Request) -> bool:
        """Whether ``request`` may be downloaded: in scope, or exempted by
        ``meta["allow_offsite"]``. Raises InvalidURL for a URL yarl cannot parse."""
        url = request.parsed_url
        scheme = url.scheme
        if scheme in LOCAL_SCHEMES:
            return scheme in self.schemes or bool(request.meta.get("allow_offsite"))
        if not self.restricted or self.allows(url):
            return True
        return bool(request.meta.get("allow_offsite"))

    def _judge(self, scheme: str, raw_host: str | None, port: int | None) -> bool:
        if scheme not in self.schemes:
            return False
        if scheme in LOCAL_SCHEMES:
            return True  # allowed_schemes lets them in: there is no host to judge
        if not raw_host:
            return False
        host = raw_host.lower().removesuffix(".")
        is_ip = ":" in host or host.rpartition(".")[2].isdigit()
        if ":" in host:
            try:  # a zone ("%25eth0" in a URL) stays part of the address
                host = str(ipaddress.ip_address(host.replace("%25", "%", 1)))
            except ValueError:
                return False
        if host in self._hosts or (host, port) in self._host_ports:
            return True
        if is_ip:  # an IP literal has no subdomains: "x.1.2.3.4" is a name, not 1.2.3.4
            return False
        if self._suffixes and host.endswith(self._suffixes):
            return True
        return any(p == port and host.endswith(suffix) for suffix, p in self._suffix_ports)

    @staticmethod
    def describe(url: URL | str) -> str:
        """``host``, or ``host:port`` when the URL names a port: for logs and stats."""
        if isinstance(url, str):
            text = url
            try:
                url = URL(text)
            except Exception:
                return text
        host = url.raw_host or ""
        if ":" in host:
            host = f"[{host}]"
        return host if url.explicit_port is None else f"{host}:{url.explicit_port}"

    def __repr__(self) -> str:
        if not self.restricted:
            return "<Scope: every host>"
        return f"<Scope {[str(e) for e in self.entries]}>"


def parse_entry(item: Any) -> tuple[Entry, str]:
    """An ``allowed_domains`` entry, and what was reduced to get it ("" when nothing
    was): "URLs" or "wildcards". ValueError says why an entry is unusable."""
    if not isinstance(item, str):
        raise ValueError(f"not a host name but {type(item).__name__}")
    text = item.strip().lower()
    if not text:
        raise ValueError("empty")
    reduced = ""
    if text.startswith("*."):
        text, reduced = text[2:], "wildcards"
    if "://" not in text and text.count(":") >= 2 and not text.startswith("["):
        return Entry(_ip(text), None, True), reduced  # a bare IPv6 literal: "::1"
    try:
        url = URL(text if "://" in text else f"http://{text}")
        host, port = url.raw_host, url.explicit_port
    except Exception as exc:  # ValueError, and IndexError for some bracket misuse
        raise ValueError(str(exc) or type(exc).__name__) from None
    if not host:
        raise ValueError("no host")
    if (
        "://" in text
        or url.raw_user is not None
        or url.raw_path not in ("", "/")
        or (url.raw_query_string or url.raw_fragment)
    ):
        reduced = "URLs"
    if port is None and text.rstrip("/").endswith(":"):
        raise ValueError("an empty port")
    if port == 0:
        raise ValueError("port 0")
    if ":" in host:  # yarl keeps a zone percent-encoded, as it must be in a URL
        return Entry(_ip(host.replace("%25", "%", 1)), port, True), reduced
    host = host.removesuffix(".")
    labels = host.split(".")
    if labels[-1].isdigit():
        return Entry(_ip(host), port, True), reduced  # "127.1" is not an address: unusable
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError("not a host name")
    return Entry(host, port, False), reduced


def _ip(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise ValueError("not an IP address") from None


def _authority_prefix(url: str) -> str:
    """``url`` up to the end of its authority (the first ``//``, up to the first ``/``,
    ``?`` or ``#`` after it), exactly as written. The scheme, host and port yarl reads
    come from this part alone, so URLs with equal prefixes get equal verdicts (a
    property test holds ``allows_url`` to ``allows`` on tricky URLs)."""
    start = url.find("//")
    if start < 0:
        return url
    start += 2
    end = len(url)
    for mark in "/?#":
        at = url.find(mark, start, end)
        if at >= 0:
            end = at
    return url[:end]
