"""URL canonicalization and request fingerprints.

Every link a spider yields is canonicalized and fingerprinted before the dupe check, so
this is the hottest code in a link-heavy crawl. The common case (an ASCII URL that is
already lower-case in scheme and host, without a default port) is settled with a few
string operations; only unusual URLs pay for full parsing and re-quoting.

The canonical form: scheme and host lower-case, default port dropped, empty
path as ``/``, fragment dropped, query parameters sorted (stable, so repeated keys keep
their order), non-ASCII and unsafe characters percent-encoded as UTF-8.
"""

from __future__ import annotations

import re
from hashlib import sha1
from urllib.parse import SplitResult, urljoin, urlsplit

from w3lib.url import safe_url_string

__all__ = ["LinkResolver", "canonicalize_url", "fingerprint", "in_domain", "url_host"]

_DEFAULT_PORT_NUMBERS = {"http": "80", "https": "443"}
_HAS_SCHEME = re.compile(r"^\w+://", re.IGNORECASE)


def canonicalize_url(url: str) -> str:
    """The canonical form of ``url``; raises ValueError for URLs that cannot be parsed."""
    if not url.isascii() or " " in url:
        url = safe_url_string(url)
    if url.startswith("http://"):
        start, scheme = 7, "http"
    elif url.startswith("https://"):
        start, scheme = 8, "https"
    else:
        return _canonicalize_slow(url)
    hash_at = url.find("#", start)
    if hash_at >= 0:
        url = url[:hash_at]
    # The authority ends at the first "/" or "?", whichever comes first.
    end = url.find("/", start)
    q = url.find("?", start)
    if end < 0 or 0 <= q < end:
        end = q if q >= 0 else len(url)
    netloc = url[start:end].lower()
    if not netloc or "@" in netloc or "[" in netloc:
        return _canonicalize_slow(url)
    if ":" in netloc:
        host, _, port = netloc.partition(":")
        if not port.isdigit() or not host:
            raise ValueError(f"bad port in URL {url!r}")
        if port == _DEFAULT_PORT_NUMBERS[scheme]:
            netloc = host
    rest = url[end:]
    if not rest:
        return f"{scheme}://{netloc}/"
    if rest[0] == "?":
        rest = "/" + rest
    qpos = rest.find("?")
    if qpos >= 0:
        rest = rest[:qpos] + _sort_query(rest[qpos + 1 :])
    return f"{scheme}://{netloc}{rest}"


def _sort_query(query: str) -> str:
    if not query:
        return ""
    if "&" not in query:
        return "?" + query
    parts = [p for p in query.split("&") if p]
    if not parts:
        return ""
    if len(parts) > 1:
        parts.sort(key=_param_name)
    return "?" + "&".join(parts)


def _param_name(param: str) -> str:
    return param.partition("=")[0]


def _canonicalize_slow(url: str) -> str:
    parts: SplitResult = urlsplit(url)
    scheme = parts.scheme.lower()
    if not scheme:
        raise ValueError(f"missing scheme in URL {url!r}")
    host = parts.hostname or ""
    port = parts.port  # raises ValueError for a bad port
    netloc = host
    if ":" in host:
        netloc = f"[{host}]"
    if port is not None and _DEFAULT_PORT_NUMBERS.get(scheme) != str(port):
        netloc = f"{netloc}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    path = parts.path or ("/" if scheme in ("http", "https") else "")
    return f"{scheme}://{netloc}{path}{_sort_query(parts.query)}"


def fingerprint(method: str, canonical_url: str, body: bytes) -> bytes:
    """SHA-1 over method, canonical URL and body: the default ``taskid``."""
    data = f"{method} {canonical_url}".encode("ascii", "surrogateescape")
    if body:
        data += b"\n" + body
    return sha1(data, usedforsecurity=False).digest()


#: How many URLs each of the fingerprint memo's two generations holds (so at most twice
#: this many, about 150 bytes each with the URL string).
FINGERPRINT_MEMO_SIZE = 8192
_recent_fps: dict[str, bytes] = {}
_older_fps: dict[str, bytes] = {}


def get_fingerprint(url: str) -> bytes:
    """``fingerprint("GET", canonicalize_url(url), b"")``, remembered for the URLs met
    last. Most links a page yields were met on earlier pages (a site's navigation, the
    pages everyone links to); their requests are dropped as duplicates, and for those
    canonicalizing and hashing again is most of their cost. Two generations bound the
    memo: when the recent one fills up it becomes the older one, and the older one is
    dropped, so a URL met again within the last few thousand is found."""
    global _recent_fps, _older_fps
    fp = _recent_fps.get(url)
    if fp is None:
        fp = _older_fps.get(url)
        if fp is None:
            fp = fingerprint("GET", canonicalize_url(url), b"")
        if len(_recent_fps) >= FINGERPRINT_MEMO_SIZE:
            _older_fps, _recent_fps = _recent_fps, {}
        _recent_fps[url] = fp
    return fp


def url_netloc(url: str) -> str:
    """The lower-case ``host[:port]`` of ``url`` (no credentials), cheaply: a slot by
    host and port, a link extractor's domain check."""
    start = url.find("//") + 2
    end = len(url)
    for mark in "/?#":
        at = url.find(mark, start)
        if 0 <= at < end:
            end = at
    return url[start:end].rpartition("@")[2].lower()


def url_host(url: str) -> str:
    """The lower-case host of ``url`` (no port), cheaply: the default download slot."""
    start = url.find("//")
    if start < 0:
        return ""
    start += 2
    end = len(url)
    for ch in "/?#":
        i = url.find(ch, start)
        if 0 <= i < end:
            end = i
    netloc = url[start:end]
    at = netloc.rfind("@")
    if at >= 0:
        netloc = netloc[at + 1 :]
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1].lower()
    colon = netloc.find(":")
    if colon >= 0:
        netloc = netloc[:colon]
    return netloc.lower()


def add_http_if_no_scheme(url: str) -> str:
    """``url`` with ``http:`` in front when it has no scheme (``//host`` included)."""
    if _HAS_SCHEME.match(url):
        return url
    return ("http:" if url.startswith("//") else "http://") + url


def in_domain(url: str, domain: str) -> bool:
    """Whether ``url``'s host is ``domain`` or one of its subdomains."""
    host = url_host(url)
    domain = domain.lower().strip(".")
    return host == domain or host.endswith("." + domain)


class LinkResolver:
    """Resolves links found on one page against its base URL.

    ``urllib.parse.urljoin`` costs a few microseconds a call, and a page has dozens of
    links. Nearly all of them are root-relative (``/a/b``), plainly relative
    (``b.html``) or relative with leading dot segments (``./b.html``, ``../d/b.html``);
    those are joined here by concatenation with the base's origin or one of its
    directories, computed once per page. Anything else (dot segments further in,
    ``//host``, queries or fragments alone, schemes, odd characters, an unusual base)
    goes to ``urljoin``, so the result is always what ``urljoin`` gives (a property test
    holds it to that).
    """

    __slots__ = ("_directory", "_origin", "_segments", "base")

    def __init__(self, base: str) -> None:
        self.base = base
        self._origin: str | None = None
        self._directory: str | None = None
        self._segments: list[str] = []
        if not base.startswith(("http://", "https://")) or not base.isprintable():
            return
        if not base.isascii() or "\\" in base:
            return
        start = base.index("//") + 2
        end = len(base)
        for mark in "?#":
            at = base.find(mark, start)
            if 0 <= at < end:
                end = at
        slash = base.find("/", start, end)
        if slash < 0:
            origin, path = base[:end], "/"
        else:
            origin, path = base[:slash], base[slash:end]
        if start == len(origin) or "/." in path or ";" in path or "//" in path:
            return
        self._origin = origin
        directory = path[: path.rfind("/") + 1]
        self._directory = origin + directory
        self._segments = directory.split("/")[1:-1]

    def resolve(self, href: str) -> str:
        if href[:7] == "http://" or href[:8] == "https://":
            # Most links of a site spread over hosts are absolute: given back as they
            # are when urljoin would give them back unchanged, without its two parses.
            return href if _absolute_as_is(href) else urljoin(self.base, href)
        directory = self._directory
        if directory is not None and href and href[0] == ".":
            return self._dotted(href)
        if directory is not None and _plain(href):
            first = href[0]
            if first == "/":
                return self._origin + href  # type: ignore[operator]
            if first not in "?#" and ":" not in href.partition("/")[0]:
                return directory + href
        return urljoin(self.base, href)

    def _dotted(self, href: str) -> str:
        """``./x`` and ``../../x``: the directory, or one of its parents (never above
        the root, as urljoin clamps), then the rest as it is."""
        at = ups = 0
        while True:
            if href.startswith("./", at):
                at += 2
            elif href.startswith("../", at):
                at += 3
                ups += 1
            else:
                break
        rest = href[at:]
        if at == 0 or not _plain(rest) or rest[0] in "./?#":
            return urljoin(self.base, href)
        segments = self._segments
        kept = segments[: len(segments) - ups] if ups < len(segments) else []
        path = "/" + "".join(s + "/" for s in kept)
        return self._origin + path + rest  # type: ignore[operator]


def _absolute_as_is(href: str) -> bool:
    """Whether urljoin gives the absolute http(s) URL ``href`` back as it is, whatever
    the base: a host, and nothing its parse and re-assembly would change (blanks it
    strips, an empty query or fragment it drops, ``;params`` it splits, brackets it
    checks). Either urljoin re-assembles the parts (same scheme as the base) or returns
    ``href`` untouched (another scheme), so the same on both counts."""
    start = 7 if href[4] == ":" else 8
    return (
        len(href) > start
        and href[start] not in "/?#"
        and href.isascii()
        and href.isprintable()
        and href[-1] not in "?#"
        and "?#" not in href
        and ";" not in href
        and "[" not in href
        and "]" not in href
        and "\\" not in href
    )


def _plain(href: str) -> bool:
    """Whether urljoin would take ``href`` as it is: no blanks it strips, no empty query
    or fragment it drops, no empty segments it collapses, no dot segments it resolves,
    no ``;params`` it splits."""
    return (
        bool(href)
        and href.isprintable()
        and href[0] != " "
        and href[-1] not in "?# "
        and "?#" not in href
        and "//" not in href
        and "/." not in href
        and ";" not in href
        and "\\" not in href
    )
