"""URL canonicalization and request fingerprints.

Every link a spider yields is canonicalized and fingerprinted before the dupe check, so
this is the hottest code in a link-heavy crawl. The common case (an ASCII URL that is
already lower-case in scheme and host, without a default port) is settled with a few
string operations; only unusual URLs pay for full parsing and re-quoting.

The canonical form (SPEC §2): scheme and host lower-case, default port dropped, empty
path as ``/``, fragment dropped, query parameters sorted (stable, so repeated keys keep
their order), non-ASCII and unsafe characters percent-encoded as UTF-8.
"""

from __future__ import annotations

from hashlib import sha1
from urllib.parse import SplitResult, urlsplit

from w3lib.url import safe_url_string

__all__ = ["canonicalize_url", "fingerprint", "url_host"]

_DEFAULT_PORTS = {"http": ":80", "https": ":443"}
_SCHEMES_OK = ("http://", "https://")


def canonicalize_url(url: str) -> str:
    """The canonical form of ``url``; raises ValueError for URLs that cannot be parsed."""
    if not url.isascii() or " " in url or "%" in url:
        url = safe_url_string(url)
    hash_at = url.find("#")
    if hash_at >= 0:
        url = url[:hash_at]
    if url.startswith(_SCHEMES_OK):
        # Fast path: examine the authority without a full parse.
        start = url.index("//") + 2
        slash = url.find("/", start)
        q = url.find("?", start)
        end = min(x for x in (slash, q, len(url)) if x >= 0)
        netloc = url[start:end].lower()
        if netloc and "@" not in netloc and "[" not in netloc:
            scheme = url[: start - 3]
            host, colon, port = netloc.partition(":")
            if colon:
                if not port.isdigit() or not host:
                    raise ValueError(f"bad port in URL {url!r}")
                if netloc.endswith(_DEFAULT_PORTS[scheme]):
                    netloc = host
            rest = url[end:]
            if not rest or rest[0] == "?":
                rest = "/" + rest
            qpos = rest.find("?")
            if qpos >= 0:
                rest = rest[:qpos] + _sort_query(rest[qpos + 1 :])
            return f"{scheme}://{netloc}{rest}"
    return _canonicalize_slow(url)


def _sort_query(query: str) -> str:
    if not query:
        return ""
    parts = [p for p in query.split("&") if p]
    if not parts:
        return ""
    parts.sort(key=lambda p: p.partition("=")[0])
    return "?" + "&".join(parts)


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
    if port is not None and _DEFAULT_PORTS.get(scheme) != f":{port}":
        netloc = f"{netloc}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    path = parts.path or ("/" if scheme in ("http", "https") else "")
    return f"{scheme}://{netloc}{path}{_sort_query(parts.query)}"


def fingerprint(method: str, canonical_url: str, body: bytes) -> bytes:
    """SHA-1 over method, canonical URL and body: the default ``taskid``."""
    h = sha1(method.encode("ascii"), usedforsecurity=False)
    h.update(b" ")
    h.update(canonical_url.encode("ascii", "surrogateescape"))
    if body:
        h.update(b"\n")
        h.update(body)
    return h.digest()


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
