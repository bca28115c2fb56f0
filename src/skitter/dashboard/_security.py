"""Who may read the dashboard and who may change the crawl.

The threats, and what stops each:

- **another site in the user's browser** posting to ``127.0.0.1:PORT`` (CSRF): every
  state-changing request must carry a token in the ``X-Skitter-CSRF`` header. The page
  gets one embedded in its HTML; a foreign page cannot read that HTML (same-origin
  policy), and a custom header forces a CORS preflight the dashboard never grants. A
  request whose ``Origin`` is not the dashboard's own, or that the browser marks
  ``Sec-Fetch-Site: cross-site``, is refused before anything else.
- **DNS rebinding** (a foreign name resolving to 127.0.0.1 so the browser treats the
  dashboard as that site's origin): without a login token, requests must name a
  loopback host in ``Host``.
- **other machines**, when the dashboard listens beyond loopback: a token is then
  required for every request, as ``Authorization: Bearer TOKEN`` (scripts,
  Prometheus) or through the ``/login`` form (POSTed, so the token never sits in a URL,
  a browser's history or a proxy's log), which sets an HttpOnly, SameSite=Strict
  session cookie that lasts ``SESSION_SECONDS`` (Secure when served over https).
  Listening beyond loopback without a token is refused at start.
- **garbage in headers**: a cookie, token or header that is not ASCII (or not even
  UTF-8) is simply not valid: 401 or 403, never a server error.

CSRF tokens are ``nonce.HMAC(secret, nonce)`` and session tokens
``nonce.issued.HMAC(secret, nonce:issued)``, with a secret made per dashboard: nothing
to store, a session ends ``SESSION_SECONDS`` after the login whatever the browser does
with its cookie, and a restart invalidates them all. Static files (the stylesheet, the
script, the icon) are public: they are the same for everyone, hold no crawl data, and
the login page needs the stylesheet.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from skitter.exceptions import ConfigError

__all__ = ["CSRF_HEADER", "Guard", "Handler", "check_exposure", "is_loopback", "json_error"]

CSRF_HEADER = "X-Skitter-CSRF"
MIN_TOKEN_LENGTH = 16
#: How long a login lasts: the cookie's Max-Age, and the session token's own expiry.
SESSION_SECONDS = 12 * 3600
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_PUBLIC_PREFIXES = ("/static/", "/login")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_error(status: int, message: str, **headers: str) -> web.Response:
    """An error the page can show as it is: ``{"error": message}`` (a header quoted in
    it that was not UTF-8 shows as replacement characters)."""
    text = message.encode("utf-8", "replace").decode("utf-8")
    return web.Response(
        status=status,
        body=orjson.dumps({"error": text}),
        content_type="application/json",
        headers=headers,
    )


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses; hostnames other than localhost
    are not resolved here, so they count as exposed."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token, or with a guessable one."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(
            f"the dashboard token must be at least {MIN_TOKEN_LENGTH} characters; make one "
            'with: python -c "import secrets; print(secrets.token_urlsafe())"'
        )
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"the dashboard would listen on {host or 'every interface'}, which other "
            "machines can reach, without a token: pass --ui-token (or token=...), or "
            "listen on 127.0.0.1"
        )


class Guard:
    """Authentication, CSRF and origin checks, as one aiohttp middleware."""

    def __init__(
        self,
        token: str | None,
        cookie_name: str = "skitter_session",
        *,
        session_seconds: float = SESSION_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.token = token
        self.cookie_name = cookie_name
        self.session_seconds = session_seconds
        self._clock = clock
        self._secret = secrets.token_bytes(32)

    # -- tokens ---------------------------------------------------------------------------
    def _sign(self, purpose: str, nonce: str) -> str:
        mac = hmac.new(self._secret, f"{purpose}:{nonce}".encode(), hashlib.sha256)
        return mac.hexdigest()

    def _issue(self, purpose: str, nonce: str | None = None) -> str:
        nonce = nonce or secrets.token_urlsafe(12)
        return f"{nonce}.{self._sign(purpose, nonce)}"

    def _valid(self, purpose: str, value: str | None) -> bool:
        # Headers and cookies arrive as any bytes; only ASCII can be one of our tokens.
        if not value or "." not in value or not value.isascii():
            return False
        nonce, _, mac = value.rpartition(".")
        return hmac.compare_digest(mac, self._sign(purpose, nonce))

    def issue_csrf(self) -> str:
        """A token for one page (or one script) to send with state-changing requests."""
        return self._issue("csrf")

    def issue_session(self) -> str:
        """A session token that expires ``session_seconds`` from now."""
        return self._issue("session", f"{secrets.token_urlsafe(12)}.{int(self._clock())}")

    def _valid_session(self, value: str | None) -> bool:
        if not self._valid("session", value):
            return False
        assert value is not None
        issued = value.split(".")[1] if value.count(".") == 2 else ""
        return issued.isdigit() and 0 <= self._clock() - int(issued) < self.session_seconds

    def token_matches(self, candidate: str) -> bool:
        if self.token is None:
            return False
        try:  # a header that was not UTF-8 holds surrogates: it cannot be the token
            given = candidate.encode()
        except UnicodeEncodeError:
            given = b""
        return hmac.compare_digest(given, self.token.encode())

    # -- checks ---------------------------------------------------------------------------
    def _bearer(self, request: web.Request) -> bool:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self.token_matches(value.strip())

    def _session(self, request: web.Request) -> bool:
        return self._valid_session(request.cookies.get(self.cookie_name))

    def _cross_origin(self, request: web.Request) -> str | None:
        """Why a state-changing request looks cross-origin, or None."""
        if request.headers.get("Sec-Fetch-Site", "") == "cross-site":
            return "cross-site request refused"
        origin = request.headers.get("Origin")
        # Hosts, not schemes, are compared: behind a TLS proxy the page is https while
        # the dashboard sees http, and a foreign site differs in host either way.
        if origin is not None and _netloc(origin) != request.host.lower():
            return f"request from origin {origin} refused"
        return None

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.token is None and not is_loopback(_host(request)):
            return json_error(403, "the Host header must name a loopback address")
        safe = request.method in _SAFE_METHODS
        if not safe and (why := self._cross_origin(request)) is not None:
            return json_error(403, why)
        public = request.path.startswith(_PUBLIC_PREFIXES)
        by_bearer = self.token is not None and self._bearer(request)
        if self.token is not None and not public and not by_bearer and not self._session(request):
            if safe and request.path == "/":
                raise web.HTTPSeeOther("/login")
            return json_error(401, "a token is required: Authorization: Bearer TOKEN", **_CHALLENGE)
        # A bearer header is never sent by a browser on its own, so it needs no CSRF token;
        # a cookie is, so a request that relies on one (or on nothing) must carry one.
        needs_csrf = not (safe or public or by_bearer)
        if needs_csrf and not self._valid("csrf", request.headers.get(CSRF_HEADER)):
            return json_error(403, f"missing or invalid {CSRF_HEADER} header; reload the page")
        return await handler(request)

    def login_cookie(self, response: web.StreamResponse, *, secure: bool = False) -> None:
        """Log the browser in: a session cookie for ``session_seconds``, Secure when the
        page was served over https (a cookie marked so is never sent in clear)."""
        response.set_cookie(
            self.cookie_name,
            self.issue_session(),
            max_age=int(self.session_seconds),
            httponly=True,
            samesite="Strict",
            secure=secure,
            path="/",
        )


def _host(request: web.Request) -> str:
    """The host the request names, or "" if its Host header is not one (not ASCII: yarl
    would raise on it)."""
    if not request.host.isascii():
        return ""
    try:
        return request.url.host or ""
    except (ValueError, UnicodeError):
        return ""


def _netloc(origin: str) -> str | None:
    try:
        return urlsplit(origin).netloc.lower() or None
    except ValueError:
        return None


_CHALLENGE: dict[str, Any] = {"WWW-Authenticate": 'Bearer realm="skitter"'}
