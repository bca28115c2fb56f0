"""The credentials of a stored request: kept off the store, held in memory.

A request may carry ``Authorization``, ``Proxy-Authorization`` or ``Cookie`` headers of
the spider's own (``Request(url, headers={"Authorization": "Bearer ..."})``), and its URL
a ``user:password@`` (which the HTTP client sends as basic auth). Those a
middleware makes at download time are not the spider's: HTTP auth's ``Authorization``
(``derive``), and ``Cookie`` unless ``meta["dont_merge_cookies"]`` keeps the cookie
middleware away (it rebuilds the header from its jar, dropping any other); they are
left out of the store, as before, and made again where the request is downloaded. A stored
request must not: the job directory's database and a Redis job outlive the process,
and Redis is read by every worker. So the codec stores, in their place, an opaque
*mark* per header and for the URL's userinfo (``meta["_held_headers"]``: random, derived
from nothing secret), and ``HELD_HEADERS`` keeps the values in this process's memory.

When this process reads the request back, the codec puts them back, so the downloader
middlewares see the request as the spider made it. A request whose headers this process
was never given (another worker stored it, or a killed run of a resumed job did) is
never sent without them: the Downloader raises a ``FatalError`` that says where such a
header belongs instead (``DEFAULT_REQUEST_HEADERS``, HTTP auth, or a downloader
middleware, which every process of a job runs alike; ``Request(cookies=...)``, which is
stored, for cookies), so the crawl stops with a
non-zero exit status and the task stays queued for a run that has them.

``LIMIT`` bounds how many values one process holds, so that a spider that makes a new
token per request fails loudly instead of growing without end.
"""

from __future__ import annotations

import secrets
from typing import Any

from skitter._secrets import split_page_userinfo
from skitter.exceptions import CodecError, FatalError
from skitter.http._headers import undecodable
from skitter.http._request import Request

__all__ = [
    "HEADERS_MARK",
    "HELD_HEADERS",
    "LIMIT",
    "SECRET_HEADERS",
    "HeldHeaders",
    "put_back",
    "spiders_own",
    "unrestorable",
    "without_credentials",
    "without_userinfo",
]

#: The meta key of a stored request that had credential headers: their marks.
HEADERS_MARK = "_held_headers"
#: Headers never stored (lower case): made again at download time, or held here.
SECRET_HEADERS = frozenset({"cookie", "authorization", "proxy-authorization"})
#: How many header values one process holds.
LIMIT = 10_000
#: The name the userinfo of a request's URL is held by (no header has a space in its name).
URL_USERINFO = "user:password of the URL"


class HeldHeaders:
    """Credential header values by mark, and each (name, value)'s mark; and the values
    a downloader middleware derives from the settings (HTTP auth's ``Authorization``),
    which are neither stored nor held: every process of the job derives them again."""

    def __init__(self) -> None:
        self._by_mark: dict[str, tuple[str, str]] = {}
        self._marks: dict[tuple[str, str], str] = {}
        self._derived: set[tuple[str, str]] = set()

    def derive(self, name: str, value: str) -> None:
        """``name: value`` is made by a middleware at download time, from the settings."""
        self._derived.add((name.lower(), value))

    def is_derived(self, name: str, value: str) -> bool:
        """Whether ``name: value`` is a middleware's, to be made again, not held."""
        return (name.lower(), value) in self._derived

    def __len__(self) -> int:
        return len(self._by_mark)

    def hold(self, name: str, value: str) -> str:
        """The mark that stands for header ``name: value`` in a stored request."""
        key = (name.lower(), value)
        mark = self._marks.get(key)
        if mark is None:
            if len(self._marks) >= LIMIT:
                raise FatalError(
                    f"this process holds {LIMIT} credentials already, and a request's "
                    f"{name} would be one more: a spider that makes a credential per "
                    "request must set it in a downloader middleware, at download time, so "
                    "that stored requests need none"
                )
            mark = secrets.token_hex(8)
            self._marks[key] = mark
            self._by_mark[mark] = (name, value)
        return mark

    def give_back(self, mark: str) -> tuple[str, str] | None:
        """The (name, value) a mark stands for, or None when this process has none."""
        return self._by_mark.get(mark)


#: The header values this process holds.
HELD_HEADERS = HeldHeaders()


def unrestorable(request: Request) -> FatalError:
    """The error for a stored request whose credential headers this process never held."""
    return FatalError(
        f"{request!r} was stored without its credentials (Authorization, "
        "Proxy-Authorization or Cookie headers, or the user:password of its URL: they never "
        "go to the job directory or Redis), and this process was not given them; set them "
        "where every process of the job has them: DEFAULT_REQUEST_HEADERS, HTTP auth "
        "(http_user/http_pass, for a URL's user:password too), "
        "Request(cookies=...) for cookies, or a downloader middleware's process_request. "
        "The job keeps the task for that run."
    )


def spiders_own(name: str, value: str, meta: dict[str, Any]) -> bool:
    """Whether a credential header is the spider's own, to be held, rather than one a
    middleware makes again at download time."""
    if name.lower() == "cookie":
        return bool(meta.get("dont_merge_cookies"))
    return not HELD_HEADERS.is_derived(name, value)


def without_credentials(
    request: Request, meta: dict[str, Any]
) -> tuple[str, list[tuple[str, str]] | None, dict[str, Any]]:
    """The request's URL and headers (as text) as they may be stored, and ``meta`` with
    the marks of the credentials held in their place. A header that is not UTF-8 is
    refused: the store keeps text, and would change its bytes."""
    held = []
    headers = None
    if request.has_headers:
        headers = []
        for key, value in request.headers.text_items():
            if not (key + value).isascii() and undecodable(key + value):
                raise CodecError(
                    f"header {key!r} of {request!r} is not UTF-8 text", request=request
                )
            if key.lower() not in SECRET_HEADERS:
                headers.append((key, value))
            elif spiders_own(key, value, meta):
                held.append(HELD_HEADERS.hold(key, value))
    url = request.url
    if "@" in url:
        url, mark = without_userinfo(url)
        if mark is not None:
            held.append(mark)
    if held:
        meta = {**meta, HEADERS_MARK: [*meta.get(HEADERS_MARK, ()), *held]}
    return url, headers, meta


def without_userinfo(url: str) -> tuple[str, str | None]:
    """``url`` as it may be stored, and the mark of its ``user:password@`` (held here);
    None when it has none."""
    prefix, userinfo, rest = split_page_userinfo(url)
    if userinfo is None:
        return url, None
    return prefix + rest, HELD_HEADERS.hold(URL_USERINFO, userinfo)


def put_back(
    url: str, headers: list[tuple[str, str]] | None, meta: dict[str, Any]
) -> tuple[str, list[tuple[str, str]] | None, dict[str, Any]]:
    """The stored URL, headers and meta with the credentials this process holds put
    back; the marks of those it does not hold stay in meta, for the Downloader to refuse
    the request loudly."""
    marks = meta[HEADERS_MARK]
    if not isinstance(marks, list) or not all(isinstance(mark, str) for mark in marks):
        raise ValueError(f"meta[{HEADERS_MARK!r}] must be a list of marks")
    given = [(mark, HELD_HEADERS.give_back(mark)) for mark in marks]
    missing = [mark for mark, header in given if header is None]
    meta = {key: value for key, value in meta.items() if key != HEADERS_MARK}
    if missing:
        meta[HEADERS_MARK] = missing
    back = []
    for _, header in given:
        if header is None:
            continue
        if header[0] == URL_USERINFO:
            prefix, _userinfo, rest = split_page_userinfo(url)
            url = f"{prefix}{header[1]}@{rest}"
        else:
            back.append(header)
    return url, [*(headers or ()), *back] or None, meta
