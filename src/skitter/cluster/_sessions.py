"""``RedisSessions``: SessionMiddleware's pool shared by every worker of a job.

With SESSION_POOL_SIZE set, a worker alone would keep its own sessions: N workers would
show a site N times the visitors, use a session N times SESSION_MAX_USES, and go on
using a session another worker saw blocked. In a Redis job the pool lives in the job's
keys instead (``JobKeys.sessions``: shard 0, with the job's other shared records), each
change one script call (``lua/session_*.lua``): a lease of a block of a session's uses,
a retirement, what a worker learnt (its jar, its proxy index). The worker side, which
spends leased uses without a round trip, is the downloader's ``SharedSessions``.

The jars hold cookie values, which are credentials: they are in Redis because every
worker must send them, never logged, and deleted with their session and with the job
(REDIS_FLUSH_ON_START, the last worker out without REDIS_PERSIST). A proxy is kept as
the pool's index, never its URL (which may carry a password).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from skitter.downloader.wiring import LEASE_USES, Lease, Session, SessionPool
from skitter.redis import JobKeys, register, translating

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisSessions"]

#: A Redis error is the job's outage (``FrontierUnavailable``: the task is left to its
#: lease and runs again once Redis is back), not a failure of the request.
_translated = translating(lambda self: f"Redis for {self.keys.name} (sessions)")


class RedisSessions:
    """The job's live sessions, their uses and jars, and the list of retired ones."""

    def __init__(self, redis: Redis, keys: JobKeys, *, lease: int = LEASE_USES) -> None:
        if lease < 1:
            raise ValueError(f"lease must be >= 1, got {lease!r}")
        self.client = redis
        self.keys = keys
        self.lease_uses = lease
        #: Entries of the retired list this worker has read.
        self._cursor = 0
        self._lease = register(redis, "session_lease", package="skitter.cluster")
        self._retire = register(redis, "session_retire", package="skitter.cluster")
        self._save = register(redis, "session_save", package="skitter.cluster")

    def __repr__(self) -> str:
        return f"<RedisSessions {self.keys.sessions}>"

    @_translated
    async def lease(
        self, pool: SessionPool, scope: str, wanted: str | None, known: Mapping[str, int]
    ) -> Lease:
        keys = self.keys
        reply = await self._lease(
            [keys.sessions, keys.session_scope(scope), keys.session_jars, keys.sessions_retired],
            [
                wanted or "",
                pool.size,
                pool.max_uses,
                self.lease_uses,
                self._cursor,
                scope,
                orjson.dumps(dict(known)) if known else b"{}",
                *pool.fingerprints,
            ],
        )
        sid, raw, granted, new, jar, gone = reply
        record: dict[str, Any] = orjson.loads(raw)
        self._cursor += len(gone)
        session = Session(
            _text(sid),
            scope,
            uses=int(record.get("uses", 0)),
            proxy=_index(record.get("proxy")),
            fingerprint=record.get("fingerprint") or None,
        )
        return Lease(
            session,
            int(granted),
            new=bool(new),
            jar=_text(jar) or None,
            jar_version=int(record.get("jar", 0)),
            gone=[_entry(entry) for entry in gone],
        )

    @_translated
    async def retire(self, session: Session, reason: str) -> bool:
        keys = self.keys
        scope_key = keys.session_scope(session.scope)
        done = await self._retire(
            [scope_key, keys.session_jars, keys.sessions_retired], [session.id, reason]
        )
        return bool(done)

    @_translated
    async def news(self) -> list[tuple[str, str]]:
        gone = await self.client.lrange(self.keys.sessions_retired, self._cursor, -1)
        self._cursor += len(gone)
        return [_entry(entry) for entry in gone]

    @_translated
    async def save(self, session: Session, jar: str | None) -> int:
        keys = self.keys
        proxy = "" if session.proxy is None else str(session.proxy)
        version = await self._save(
            [keys.session_scope(session.scope), keys.session_jars],
            [session.id, proxy, jar or ""],
        )
        return int(version)

    async def clear(self) -> int:
        """Delete the job's sessions and jars (a new run of the job starts with none)."""
        doomed = [self.keys.sessions]
        async for key in self.client.scan_iter(match=self.keys.scan("sessions")[0], count=1000):
            doomed.append(key)
        deleted = 0
        for start in range(0, len(doomed), 1000):
            deleted += int(await self.client.delete(*doomed[start : start + 1000]))
        self._cursor = 0
        return deleted


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _entry(value: Any) -> tuple[str, str]:
    """(id, reason) of an entry of the retired list."""
    sid, _, reason = _text(value).partition(" ")
    return sid, reason


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
