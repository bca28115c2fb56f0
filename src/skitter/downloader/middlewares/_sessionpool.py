"""SessionPool: the live sessions of a crawl, per scope, and when one is retired.

A sans-I/O core for SessionMiddleware. A session is what a site may recognise a
visitor by: a cookie jar (``jar_key``), a proxy (the pool's index, learnt from the
first request that goes through one) and a fingerprint (a browser profile name for
``meta["impersonate"]``). Each scope (a host, or the whole project) has at most
SESSION_POOL_SIZE live sessions: a request takes the session it names, if still live,
else the next one in turn, and a new one while the scope has fewer than the size.

A session is retired after SESSION_MAX_USES requests (the last one still goes out), or
at once when a response of it is a block; retired sessions are forgotten, and the next
request of the scope makes a new one. ``snapshot``/``restore`` carry the live sessions
across a resumed job: plain data (ids, uses, proxy index, fingerprint), never a proxy
URL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from skitter.exceptions import ConfigError

__all__ = ["SCOPES", "Session", "SessionPool", "check_scope", "jar_key"]

SCOPES = ("slot", "project")


def check_scope(scope: str) -> str:
    """SESSION_POOL_SCOPE, or ConfigError."""
    if scope not in SCOPES:
        raise ConfigError(f"SESSION_POOL_SCOPE must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


def jar_key(session_id: str) -> str:
    """The ``meta["cookiejar"]`` of a session: a string, so a job directory keeps it."""
    return f"session:{session_id}"


@dataclasses.dataclass(slots=True, eq=False)
class Session:
    id: str
    scope: str
    uses: int = 0
    #: The proxy pool's index of its proxy; None until a request went through one.
    proxy: int | None = None
    fingerprint: str | None = None
    #: Why it was retired ("blocked", "max_uses"), or None while live.
    retired: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class SessionPool:
    """Live sessions by scope; the counts go to the caller (it has the stats)."""

    def __init__(self, size: int, max_uses: int = 0, fingerprints: Sequence[str] = ()) -> None:
        if size < 1:
            raise ConfigError(f"SESSION_POOL_SIZE must be >= 0, got {size!r}")
        if max_uses < 0:
            raise ConfigError(f"SESSION_MAX_USES must be >= 0 (0: no limit), got {max_uses!r}")
        for name in fingerprints:
            if not isinstance(name, str) or not name:
                raise ConfigError(f"SESSION_FINGERPRINTS holds profile names, not {name!r}")
        self.size = size
        self.max_uses = max_uses
        self.fingerprints = tuple(fingerprints)
        self._live: dict[str, list[Session]] = {}
        self._by_id: dict[str, Session] = {}
        self._turns: dict[str, int] = {}
        self._made = 0

    @property
    def created(self) -> int:
        """Sessions made so far (restored ones included): the next id."""
        return self._made

    def live(self, scope: str | None = None) -> list[Session]:
        if scope is not None:
            return list(self._live.get(scope, ()))
        return [s for sessions in self._live.values() for s in sessions]

    def take(self, scope: str, wanted: Any = None) -> tuple[Session, bool]:
        """The session for the next request of ``scope`` and whether it is new:
        ``wanted`` (a session id) while it is live in this scope, else a new one while
        the scope has room, else the next live one in turn."""
        if wanted is not None:
            session = self._by_id.get(str(wanted))
            if session is not None and session.scope == scope:
                return session, False
        sessions = self._live.setdefault(scope, [])
        if len(sessions) < self.size:
            return self._new(scope), True
        turn = self._turns.get(scope, 0)
        self._turns[scope] = turn + 1
        return sessions[turn % len(sessions)], False

    def used(self, session: Session) -> bool:
        """Count a request of ``session``; True if that was its last (SESSION_MAX_USES)."""
        session.uses += 1
        if self.max_uses and session.uses >= self.max_uses and session.retired is None:
            self.retire(session, "max_uses")
            return True
        return False

    def retire(self, session: Session, reason: str) -> bool:
        """Take ``session`` out of its scope; False if it was out already (two requests
        of one session blocked at once)."""
        if session.retired is not None:
            return False
        session.retired = reason
        self._by_id.pop(session.id, None)
        sessions = self._live.get(session.scope)
        if sessions is not None:
            sessions.remove(session)
            if not sessions:
                del self._live[session.scope]
        return True

    def _new(self, scope: str) -> Session:
        self._made += 1
        fingerprint = None
        if self.fingerprints:
            fingerprint = self.fingerprints[(self._made - 1) % len(self.fingerprints)]
        return self._add(Session(f"s{self._made}", scope, fingerprint=fingerprint))

    def _add(self, session: Session) -> Session:
        self._live.setdefault(session.scope, []).append(session)
        self._by_id[session.id] = session
        return session

    def snapshot(self) -> dict[str, Any]:
        """The pool as plain data, for a job directory or Redis."""
        return {"made": self._made, "live": [s.to_dict() for s in self.live()]}

    def restore(self, data: Any) -> int:
        """Load a ``snapshot`` (ConfigError if it is not one); how many sessions are live.
        Sessions of a scope beyond the size are retired (SESSION_POOL_SIZE was lowered)."""
        if not isinstance(data, dict) or not isinstance(data.get("made"), int):
            raise ConfigError(f"saved sessions are not a session pool's: {data!r:.80}")
        try:
            sessions = [Session(**item) for item in data.get("live", ())]
        except TypeError as exc:
            raise ConfigError(f"saved sessions are not a session pool's: {exc}") from None
        self._live.clear()
        self._by_id.clear()
        for session in sessions:
            if len(self._live.get(session.scope, ())) < self.size and not (
                self.max_uses and session.uses >= self.max_uses
            ):
                self._add(session)
        self._made = max(self._made, data["made"])
        return len(self._by_id)
