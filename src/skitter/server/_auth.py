"""Who may use the service: Scrapyd's rules, made safe for a browser.

- With a ``username`` and ``password`` (as Scrapyd's options of those names), every
  request but the stylesheet needs HTTP basic authentication with them: what
  scrapyd-client sends (``username``/``password`` of a deploy target), what ``curl -u``
  sends, and what a browser asks a person for.
- Without them the service must listen on loopback only (refused at start otherwise),
  and a request must name a loopback host (``Host``): a foreign name resolving to
  127.0.0.1 (DNS rebinding) is refused.
- Either way, a state-changing request (POST) that a browser marks as coming from
  another site (``Origin`` not this host, ``Sec-Fetch-Site: cross-site``) is refused: a
  browser sends basic credentials (or reaches loopback) on any site's behalf, so a
  foreign page could otherwise schedule runs or delete projects. Scripts send neither
  header and are unaffected.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from skitter.dashboard.wiring import is_loopback
from skitter.exceptions import ConfigError

__all__ = ["Access", "Handler"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_PUBLIC = ("/static/",)


class Access:
    """The access rules above, as one aiohttp middleware."""

    def __init__(self, host: str, username: str | None, password: str | None) -> None:
        if bool(username) != bool(password):
            raise ConfigError("give both --username and --password, or neither")
        if not username and not is_loopback(host):
            raise ConfigError(
                f"skitter server would listen on {host or 'every interface'}, which other "
                "machines can reach, without authentication: pass --username and --password "
                "(HTTP basic auth, as Scrapyd), or listen on 127.0.0.1"
            )
        self._credentials = f"{username}:{password}".encode() if username else None

    @property
    def required(self) -> bool:
        return self._credentials is not None

    def _authorized(self, request: web.Request) -> bool:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic" or not value.isascii():
            return False
        try:
            given = base64.b64decode(value.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        assert self._credentials is not None
        return hmac.compare_digest(given, self._credentials)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self._credentials is None and not is_loopback(_host(request)):
            raise web.HTTPForbidden(text="the Host header must name a loopback address")
        if request.method not in _SAFE_METHODS and (why := _cross_origin(request)):
            raise web.HTTPForbidden(text=why)
        public = request.path.startswith(_PUBLIC)
        if self._credentials is not None and not public and not self._authorized(request):
            raise web.HTTPUnauthorized(
                text="authentication required",
                headers={"WWW-Authenticate": 'Basic realm="skitter server"'},
            )
        return await handler(request)


def _cross_origin(request: web.Request) -> str | None:
    if request.headers.get("Sec-Fetch-Site", "") == "cross-site":
        return "cross-site request refused"
    origin = request.headers.get("Origin")
    if origin is not None:
        try:
            netloc = urlsplit(origin).netloc.lower()
        except ValueError:
            netloc = ""
        if netloc != request.host.lower():
            return "request from another origin refused"
    return None


def _host(request: web.Request) -> str:
    if not request.host.isascii():
        return ""
    try:
        return request.url.host or ""
    except (ValueError, UnicodeError):
        return ""
