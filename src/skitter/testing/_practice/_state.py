"""What the practice site remembers between requests: sessions, the ViewState key and the
flaky pages already asked for. One ``SiteState`` per application, so every test's site
starts fresh."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from skitter.testing._practice._data import PracticeData, practice_data

__all__ = ["SESSION_COOKIE", "STATE", "Session", "SiteState"]

SESSION_COOKIE = "session"


@dataclass
class Session:
    csrf_token: str = ""
    user: str | None = None


@dataclass
class SiteState:
    data: PracticeData = field(default_factory=practice_data)
    sessions: dict[str, Session] = field(default_factory=dict)
    #: How often each flaky page was asked for: the first answer is always "busy".
    flaky_hits: Counter[int] = field(default_factory=Counter)
    _key: bytes = field(default_factory=lambda: secrets.token_bytes(16))

    def session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(SESSION_COOKIE, ""))

    def logged_in(self, request: web.Request) -> bool:
        session = self.session(request)
        return session is not None and session.user is not None

    def new_session(self) -> tuple[str, Session]:
        sid = secrets.token_hex(12)
        session = self.sessions[sid] = Session()
        return sid, session

    def sign(self, state: dict[str, Any]) -> str:
        """An ASP.NET-like ``__VIEWSTATE``: the form's state, base64, with its MAC, so the
        server can tell a round-tripped value from a missing, stale or forged one."""
        payload = base64.b64encode(orjson.dumps(state)).decode()
        return f"{payload}.{self._mac(payload)}"

    def verify(self, value: str) -> dict[str, Any] | None:
        payload, _, mac = value.partition(".")
        if not payload or not hmac.compare_digest(mac, self._mac(payload)):
            return None
        state: dict[str, Any] = orjson.loads(base64.b64decode(payload))
        return state

    def _mac(self, payload: str) -> str:
        return hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()[:32]


STATE: web.AppKey[SiteState] = web.AppKey("practice_state", SiteState)
