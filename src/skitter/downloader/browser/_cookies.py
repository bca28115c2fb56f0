"""Moving cookies between CookiesMiddleware's jars and a browser context.

With BROWSER_SHARE_COOKIES the HTTP side and the browser side of a spider keep one
session: the jar of CookiesMiddleware (per ``meta["cookiejar"]``) is the store, a
rendered page's fresh browser context is seeded from it, and the cookies the context
ends with (set by the server on any request of the page, or by JavaScript) go back into
it. A login done over plain HTTP is thus seen by the browser, and the reverse.

Host-only cookies stay host-only both ways (Playwright's convention: a domain without a
leading dot), so a cookie set by ``a.example`` never leaks to ``b.a.example``. Known
limitation: a cookie the page *deletes* is not deleted from the jar (the context only
reports the cookies it still has).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from email.utils import formatdate
from http.cookies import CookieError, Morsel
from typing import Any

from aiohttp import CookieJar
from yarl import URL

__all__ = ["cookies_for_browser", "store_browser_cookies"]


def cookies_for_browser(jar: CookieJar) -> list[dict[str, Any]]:
    """Every cookie in ``jar`` in Playwright's ``add_cookies`` format."""
    host_only = jar.host_only_cookies
    out: list[dict[str, Any]] = []
    for morsel in jar:  # iterating drops expired cookies first
        domain = morsel["domain"]
        if not domain:
            continue  # a "shared" cookie (no domain) is an aiohttp-only notion
        path = morsel["path"] or "/"
        is_host_only = (domain, path.rstrip("/"), morsel.key) in host_only
        cookie: dict[str, Any] = {
            "name": morsel.key,
            "value": morsel.coded_value,  # what goes on the wire, as the browser keeps it
            "domain": domain if is_host_only else "." + domain.lstrip("."),
            "path": path,
            "secure": bool(morsel["secure"]),
            "httpOnly": bool(morsel["httponly"]),
        }
        out.append(cookie)
    return out


def store_browser_cookies(jar: CookieJar, cookies: Iterable[Mapping[str, Any]]) -> None:
    """Put the cookies of a browser context (``context.cookies()``) into ``jar``."""
    for cookie in cookies:
        name, value = str(cookie["name"]), str(cookie["value"])
        domain = str(cookie.get("domain") or "")
        if not name or not domain:
            continue
        path = str(cookie.get("path") or "/")
        morsel: Morsel[str] = Morsel()
        try:
            morsel.set(name, value, value)
        except CookieError:  # a name the http.cookies module refuses
            continue
        morsel["path"] = path
        if domain.startswith("."):
            morsel["domain"] = domain  # a domain cookie; without it aiohttp makes it host-only
        if cookie.get("secure"):
            morsel["secure"] = True
        if cookie.get("httpOnly"):
            morsel["httponly"] = True
        expires = cookie.get("expires")
        if isinstance(expires, int | float) and expires > 0:
            morsel["expires"] = formatdate(expires, usegmt=True)
        scheme = "https" if cookie.get("secure") else "http"
        host = domain.lstrip(".")
        try:
            url = URL.build(scheme=scheme, host=host, path=path if path.startswith("/") else "/")
        except ValueError:
            continue
        jar.update_cookies([(name, morsel)], url)
