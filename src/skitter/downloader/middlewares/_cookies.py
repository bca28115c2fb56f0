"""CookiesMiddleware: a cookie session per spider, as a browser would keep one.

Cookies a response sets are stored and sent back on later requests to the same site.
Scrapy's meta keys apply: ``meta["cookiejar"]`` names a separate jar (one login
session per account, say), ``meta["dont_merge_cookies"]`` leaves the request's
``Cookie`` header alone and ignores the cookies of its response. ``request.cookies`` (a
dict, or a list of dicts with ``name``, ``value`` and optional ``domain``, ``path``)
goes into the jar before the request is sent, so later requests carry it too.

As in Scrapy, the ``Cookie`` header of a request is rebuilt from the jar: set cookies
through ``Request(cookies=...)``, or a raw header together with ``dont_merge_cookies``.
This is also what makes a redirected request (which copies the headers of the original)
carry the right cookies for its new URL.

The jars are aiohttp ``CookieJar`` objects with ``unsafe=True``: they implement domain,
path, expiry and ``Secure`` matching, and unlike a browser they also keep cookies of hosts
given by IP address, which crawls of intranets and local test sites need. Cookies set by
a redirect response are kept too: this middleware sits inside RedirectMiddleware, so it
sees the 3xx before it becomes the next request.

COOKIES_DEBUG logs, at DEBUG, the ``Cookie`` header of every request and the
``Set-Cookie`` headers of every response, as Scrapy does, but with each value masked
(``session=***; Path=/``): names and attributes tell what a site does with its cookies;
the values are credentials, and a log is no place for them.

With a job directory (COOKIES_PERSIST), the jars are kept there by ``CookieJarFiles``
(``_cookiejar_files``), so a resumed job is still logged in; ``dirty`` tells it which
jars changed since it last wrote them.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Hashable, Iterable, Mapping
from http.cookies import CookieError, Morsel, SimpleCookie
from typing import Any

from aiohttp import CookieJar
from yarl import URL

from skitter._types import CrawlContext
from skitter.downloader.middlewares._httpcache import CACHED_COOKIES
from skitter.exceptions import NotConfigured
from skitter.http import Request, Response
from skitter.settings import DownloaderSettings

__all__ = ["CookiesMiddleware"]

logger = logging.getLogger("skitter.downloader.cookies")


#: What an aiohttp jar made outside an event loop keeps as its loop. aiohttp stores the
#: loop only to hand it to the jars it makes itself (``CookieJar.load``) and never runs
#: anything on it; skitter never gives a jar to an aiohttp session (the transport's is a
#: ``DummyCookieJar``), so a jar works the same with this placeholder.
_NO_LOOP = asyncio.AbstractEventLoop()  # type: ignore[abstract]  # never run, see above


def _new_jar() -> CookieJar:
    """An empty jar, with or without a running event loop: the middleware is driven by
    hand too (Scrapy's synchronous API, a script, a test), not only inside a crawl."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = _NO_LOOP
    return CookieJar(unsafe=True, loop=loop)


class CookiesMiddleware:
    """Stores response cookies and sends them back, one jar per ``meta["cookiejar"]``."""

    def __init__(self, debug: bool = False, persist: bool = True) -> None:
        self._jars: dict[Hashable, CookieJar] = {}
        self.debug = debug
        #: Whether a job directory keeps the jars (COOKIES_PERSIST).
        self.persist = persist
        #: Keys of the jars changed since ``CookieJarFiles`` last saved them.
        self.dirty: set[Hashable] = set()

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> CookiesMiddleware:
        settings = crawler.settings
        if not settings.view(DownloaderSettings).cookies_enabled:
            raise NotConfigured
        own = settings.view(DownloaderSettings)
        return cls(bool(own.cookies_debug), bool(own.cookies_persist))

    @property
    def jars(self) -> Mapping[Hashable, CookieJar]:
        """Every jar made so far, by its ``meta["cookiejar"]`` key."""
        return self._jars

    def jar(self, key: Hashable = None) -> CookieJar:
        """The jar for ``meta["cookiejar"] == key`` (None: the spider's default jar)."""
        jar = self._jars.get(key)
        if jar is None:
            jar = self._jars[key] = _new_jar()
        return jar

    def shared_jar(self, key: Hashable = None) -> CookieJar:
        """``jar(key)`` for a transport that adds cookies of its own (the browser's): the
        jar counts as changed, so a job directory saves what was added."""
        self.dirty.add(key)
        return self.jar(key)

    def drop(self, key: Hashable) -> None:
        """Forget the jar ``key`` (a retired session's); a job directory deletes its file."""
        if self._jars.pop(key, None) is not None:
            self.dirty.add(key)

    def process_request(self, request: Request, spider: Any = None) -> None:
        meta = request.meta
        if meta.get("dont_merge_cookies"):
            return
        jar = self.jar(meta.get("cookiejar"))
        if not request.cookies and not len(jar):
            if request.has_headers:  # a copy of a request that had cookies (a redirect)
                request.headers.pop("Cookie", None)
            return  # nothing to send: skip parsing the URL, the common case of many crawls
        url = URL(request.url)
        if request.cookies:
            jar.update_cookies(_request_cookies(request), url)
            self.dirty.add(meta.get("cookiejar"))
        cookies = jar.filter_cookies(url)
        headers = request.headers
        headers.pop("Cookie", None)
        if cookies:
            headers["Cookie"] = "; ".join(
                f"{morsel.key}={morsel.coded_value}" for morsel in cookies.values()
            )
            if self.debug:
                logger.debug("Sending cookies to: %r\nCookie: %s", request, _masked(cookies))

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        meta = request.meta
        if meta.get("dont_merge_cookies"):
            return response
        set_cookie = response.header_list("Set-Cookie")
        if set_cookie and not meta.pop(CACHED_COOKIES, False):  # a cache's are not this run's
            key = meta.get("cookiejar")
            self.jar(key).update_cookies_from_headers(set_cookie, URL(response.url))
            self.dirty.add(key)
            if self.debug:
                logger.debug(
                    "Received cookies from: %r\n%s",
                    response,
                    "\n".join(f"Set-Cookie: {_masked_header(h)}" for h in set_cookie),
                )
        return response


_PAIR = re.compile(r"^\s*([^=;]*)=[^;]*")


def _masked(cookies: Iterable[str]) -> str:
    """Cookie names with their values masked (COOKIES_DEBUG)."""
    return "; ".join(f"{name}=***" for name in cookies)


def _masked_header(value: str) -> str:
    """A Set-Cookie header with the cookie's value masked; its attributes kept."""
    return _PAIR.sub(lambda m: f"{m[1]}=***", value, count=1)


def _request_cookies(request: Request) -> list[tuple[str, Morsel[str]]]:
    """``request.cookies`` as morsels; a cookie that cannot be encoded is skipped."""
    raw = request.cookies
    items: list[Mapping[str, Any]]
    if isinstance(raw, Mapping):
        items = [{"name": k, "value": v} for k, v in raw.items()]
    else:
        items = list(raw or ())
    out: list[tuple[str, Morsel[str]]] = []
    for item in items:
        try:
            name = str(item["name"])
            jar: SimpleCookie = SimpleCookie()
            jar[name] = str(item["value"])
            morsel = jar[name]
            for attr in ("domain", "path"):
                if item.get(attr):
                    morsel[attr] = str(item[attr])
            if item.get("secure"):
                morsel["secure"] = True
        except (CookieError, KeyError) as exc:
            logger.warning("%r: skipping invalid cookie %r: %s", request, item, exc)
            continue
        out.append((name, morsel))
    return out
