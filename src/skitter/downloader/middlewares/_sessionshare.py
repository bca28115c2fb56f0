"""SharedSessions: a worker's view of a session pool kept for the whole job elsewhere
(``cluster.RedisSessions``), so that every worker of a distributed crawl uses the same
sessions.

The store is the truth: which sessions of a scope are live, their uses, proxy index,
fingerprint and cookie jar. A worker does not ask it on every request: it *leases* a
block of a session's uses (``LEASE_USES``) in one round trip and spends them locally,
so the job-wide count can never pass SESSION_MAX_USES and a worker asks again only
every few requests. Each lease also brings the session's jar when another worker
changed it, and the sessions retired since this worker last asked: it stops using
those at once (a blocked session is retired for every worker; requests already on the
way finish); and, between leases, it reads the retired ones anew (one short round
trip) before a use when its news are older than ``FRESH`` seconds: a session retired
by one worker is dropped by the others within that time, at any request rate. What a
worker learns of a session (its cookies, its proxy) goes back to
the store only when it changed.

Uses leased by a worker that stops before making them stay counted: the count is an
upper bound, never an undercount, so no session is ever used more than it may be.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from skitter._clock import Clock, SystemClock
from skitter.downloader.middlewares._sessionpool import Session, SessionPool, jar_key

if TYPE_CHECKING:
    from aiohttp import CookieJar

    from skitter.downloader.middlewares._cookies import CookiesMiddleware

__all__ = ["FRESH", "LEASE_USES", "Lease", "SessionStore", "SharedSessions", "dump_jar", "load_jar"]

#: Uses of a session leased in one round trip to the store.
LEASE_USES = 4
#: Seconds a worker's news of retired sessions last before a use reads them anew.
FRESH = 0.25


@dataclasses.dataclass(slots=True)
class Lease:
    """The store's answer: a session, how many uses of it are this worker's, and news."""

    session: Session
    granted: int
    #: The session was made by this lease (count it once, job-wide).
    new: bool = False
    #: The session's jar (aiohttp's JSON) when newer than the one the worker holds.
    jar: str | None = None
    jar_version: int = 0
    #: (id, reason) of the sessions retired (by any worker) since the caller's cursor.
    gone: list[tuple[str, str]] = dataclasses.field(default_factory=list)


class SessionStore(Protocol):
    """A session pool shared by a job's workers. A store out of reach raises."""

    async def lease(
        self, pool: SessionPool, scope: str, wanted: str | None, known: Mapping[str, int]
    ) -> Lease:
        """Uses of ``wanted`` while it is live in ``scope``, else of a new session while
        the scope has room, else of its least used one. ``known``: the jar versions the
        caller holds. A session granted its last uses is out of the pool at once."""
        ...

    async def retire(self, session: Session, reason: str) -> bool:
        """Retire ``session`` for every worker; False if it was out already."""
        ...

    async def news(self) -> list[tuple[str, str]]:
        """(id, reason) of the sessions retired (by any worker) since the last lease or
        news."""
        ...

    async def save(self, session: Session, jar: str | None) -> int:
        """Keep ``session.proxy`` and its ``jar`` (None: unchanged) for the other
        workers; the jar's version, or -1 if the session is no longer live."""
        ...


@dataclasses.dataclass(slots=True, eq=False)
class _Held:
    session: Session
    left: int = 0
    #: This worker holds the session's last uses: it retires it when they are made.
    last: bool = False
    version: int = 0
    proxy: int | None = None


class SharedSessions:
    """The sessions this worker holds leases of, over a ``SessionStore``."""

    def __init__(
        self,
        store: SessionStore,
        pool: SessionPool,
        *,
        fresh: float = FRESH,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self._clock: Clock = clock or SystemClock()
        self.fresh = fresh
        self._news_at = -math.inf
        #: The pool's settings (size, SESSION_MAX_USES, fingerprints); its sessions are
        #: the store's, not kept here.
        self.pool = pool
        self._held: dict[str, _Held] = {}
        self._turn = 0

    def live(self) -> list[Session]:
        return [held.session for held in self._held.values()]

    async def take(
        self, scope: str, wanted: object, cookies: CookiesMiddleware | None
    ) -> tuple[Session, bool]:
        """A session of ``scope`` with a use left for this worker, and whether it is new
        (job-wide): one held already when it can, else one leased from the store."""
        name = None if wanted is None else str(wanted)
        if self._held and self._clock.monotonic() - self._news_at >= self.fresh:
            self._gone(await self.store.news(), cookies)
            self._news_at = self._clock.monotonic()
        held = self._held.get(name) if name is not None else None
        if held is not None and held.session.scope == scope and held.left > 0:
            return held.session, False
        if name is None:
            mine = [h for h in self._held.values() if h.session.scope == scope and h.left > 0]
            if mine:
                self._turn += 1
                return mine[self._turn % len(mine)].session, False
        known = {h.session.id: h.version for h in self._held.values() if h.session.scope == scope}
        lease = await self.store.lease(self.pool, scope, name, known)
        self._gone([g for g in lease.gone if g[0] != lease.session.id], cookies)
        self._news_at = self._clock.monotonic()
        session = lease.session
        held = self._held.get(session.id)
        if held is None:
            held = self._held[session.id] = _Held(session, proxy=session.proxy)
        else:
            held.session.uses, held.session.proxy = session.uses, session.proxy
            session = held.session
        held.left += lease.granted
        held.last = held.last or bool(self.pool.max_uses and session.uses >= self.pool.max_uses)
        if lease.jar is not None and cookies is not None:
            load_jar(cookies.jar(jar_key(session.id)), lease.jar)
            cookies.dirty.discard(jar_key(session.id))
        held.version = max(held.version, lease.jar_version)
        return session, lease.new

    def _gone(self, news: list[tuple[str, str]], cookies: CookiesMiddleware | None) -> None:
        """Stop using the sessions another worker retired (not counted here), or that
        another worker holds the last uses of (it retires them)."""
        for gone, reason in news:
            out = self._held.get(gone)
            if out is None or (out.last and reason == "max_uses"):
                continue  # its last uses are this worker's to make
            del self._held[gone]
            if out.session.retired is None:
                out.session.retired = "elsewhere"
                if cookies is not None:
                    cookies.drop(jar_key(gone))

    def used(self, session: Session) -> bool:
        """Count a use of ``session``; True if that was its last, job-wide."""
        held = self._held.get(session.id)
        if held is None:
            return False
        held.left -= 1
        if held.left <= 0 and held.last:
            del self._held[session.id]
            session.retired = "max_uses"
            return True
        return False

    async def retire(self, session: Session, reason: str) -> bool:
        """Retire ``session`` here and for every worker; True if this worker did it
        first (its retirement is counted once, job-wide)."""
        self._held.pop(session.id, None)
        if session.retired is not None:
            return False
        session.retired = reason
        return await self.store.retire(session, reason)

    async def learnt(self, session: Session, cookies: CookiesMiddleware | None) -> None:
        """Give the store what a response of ``session`` changed: its jar, its proxy."""
        held = self._held.get(session.id)
        if held is None or session.retired is not None:
            return
        key = jar_key(session.id)
        jar = None
        if cookies is not None and key in cookies.dirty:
            cookies.dirty.discard(key)
            found = cookies.jars.get(key)
            jar = dump_jar(found) if found is not None else None
        if jar is None and held.proxy == session.proxy:
            return
        held.proxy = session.proxy
        version = await self.store.save(session, jar)
        held.version = max(held.version, version)


def dump_jar(jar: CookieJar) -> str:
    """``jar`` as aiohttp's JSON (``CookieJar.save``), through a private 0600 file: aiohttp
    writes jars to files only."""
    with tempfile.TemporaryDirectory(prefix="skitter-jar-") as directory:
        path = Path(directory) / "jar.json"
        jar.save(path)
        return path.read_text(encoding="utf-8")


def load_jar(jar: CookieJar, text: str) -> None:
    """Replace the cookies of ``jar`` by ``text`` (a ``dump_jar``). JSON only: the text
    is checked to be a JSON object first, as aiohttp would try unpickling anything else."""
    if not isinstance(json.loads(text), dict):
        raise ValueError("a cookie jar is a JSON object")
    with tempfile.TemporaryDirectory(prefix="skitter-jar-") as directory:
        path = Path(directory) / "jar.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        jar.load(path)
