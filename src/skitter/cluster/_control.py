"""What a distributed job's workers and its dashboard tell each other, in Redis.

A worker only knows its own scheduler; a person steering a crawl of twenty workers wants
one rate, one pause button and one list of who is alive. Two hashes per job carry that:

- ``P:control`` is the person's word: ``rate`` and ``burst`` ("" = unlimited, resp. the
  default 10 x rate) with ``rate_seq``, and ``paused`` ("1"/"0") with ``pause_seq``.
  Each write bumps its ``*_seq`` (HINCRBY, in the same MULTI), so a worker applies a
  change once, when it sees a new number, and never undoes what it did not see change
  (a rate change does not resume a project its circuit breaker paused).
- ``P:workers`` is the roster: worker id -> its latest ``Heartbeat`` (JSON: status,
  rate and burst now and by default, MAX_RATE/MAX_BURST, last seen, what it is doing;
  see ``_heartbeat``). The whole
  hash expires ``roster_ttl`` after the last heartbeat, so a finished job's roster does
  not outlive it for ever; and every beat removes the workers gone for longer than
  their ``stale_after`` (``P:workers:seen`` holds when each goes stale, by Redis's
  clock), so restarts of a long-running job (a new worker id each time) never grow it
  without bound. A finished job keeps its last workers until the roster expires.

``beat`` is the worker's whole per-second cost: one round trip (``worker_beat.lua``)
that writes its heartbeat, prunes the roster and reads the control record. The
dashboard reads both hashes and writes the control record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skitter.cluster._heartbeat import Heartbeat
from skitter.redis import JobKeys, register

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT

__all__ = ["ControlRecord", "JobControl"]


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """The job's control record as last read. A ``*_seq`` of 0: never set."""

    rate: float | None = None
    burst: float | None = None
    rate_seq: int = 0
    paused: bool = False
    pause_seq: int = 0
    updated: float = 0.0

    @classmethod
    def parse(cls, fields: dict[bytes, bytes]) -> ControlRecord:
        def number(name: bytes) -> float | None:
            raw = fields.get(name)
            if not raw:
                return None
            try:
                value = float(raw)
            except ValueError:
                return None
            return value if math.isfinite(value) and value >= 0 else None

        def integer(name: bytes) -> int:
            try:
                return int(fields.get(name) or 0)
            except ValueError:
                return 0

        return cls(
            rate=number(b"rate"),
            burst=number(b"burst"),
            rate_seq=integer(b"rate_seq"),
            paused=fields.get(b"paused") == b"1",
            pause_seq=integer(b"pause_seq"),
            updated=number(b"updated") or 0.0,
        )


class JobControl:
    """The control record and worker roster of one job.

    ``redis`` is a ``redis.asyncio.Redis`` client with ``decode_responses=False`` (the
    caller's to configure and close)."""

    def __init__(self, redis: Redis, keys: JobKeys, *, roster_ttl: float = 3600.0) -> None:
        if not roster_ttl > 0:
            raise ValueError(f"roster_ttl must be > 0, got {roster_ttl!r}")
        self.client = redis
        self.keys = keys
        self._ttl_ms = int(roster_ttl * 1000)
        self._beat = register(redis, "worker_beat", package="skitter.cluster")

    def __repr__(self) -> str:
        return f"<JobControl {self.keys.tag}>"

    # -- workers ------------------------------------------------------------------------------
    async def beat(
        self, worker: str, heartbeat: Heartbeat, *, stale_after: float = 60.0
    ) -> ControlRecord:
        """Publish this worker's heartbeat, drop the workers whose ``stale_after`` has
        passed without a beat, and read the control record: one round trip."""
        if not stale_after > 0:
            raise ValueError(f"stale_after must be > 0, got {stale_after!r}")
        keys = [self.keys.workers, self.keys.workers_seen, self.keys.control]
        args: list[EncodableT] = [
            worker,
            heartbeat.encode(),
            int(stale_after * 1000),
            self._ttl_ms,
        ]
        flat = await self._beat(keys, args)
        return ControlRecord.parse(dict(zip(flat[::2], flat[1::2], strict=True)))

    async def touch(self) -> None:
        """Renew the roster's expiry: the cheapest write to the job's keys, which
        ``check_access`` makes at start to find an ACL user who may only read them."""
        await self.client.pexpire(self.keys.workers, self._ttl_ms)

    # -- the dashboard ------------------------------------------------------------------------
    async def read(self) -> tuple[ControlRecord, dict[str, Heartbeat]]:
        """The control record and every heartbeat in the roster (by worker id); an
        entry that is not a heartbeat (a person may have written it) is skipped."""
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.keys.control)
            pipe.hgetall(self.keys.workers)
            control, roster = await pipe.execute()
        workers = {}
        for key, raw in roster.items():
            beat = Heartbeat.decode(raw)
            if beat is not None:
                workers[key.decode(errors="replace")] = beat
        return ControlRecord.parse(control), workers

    async def set_rate(self, rate: float | None, burst: float | None, now: float) -> None:
        """Ask every worker to use ``rate`` and ``burst`` (None: unlimited, resp. the
        default). The caller checks them against the workers' MAX_RATE and MAX_BURST."""
        await self._write({"rate": _field(rate), "burst": _field(burst)}, "rate_seq", now)

    async def set_paused(self, paused: bool, now: float) -> None:
        """Ask every worker to pause (or resume) dispatching."""
        await self._write({"paused": "1" if paused else "0"}, "pause_seq", now)

    async def _write(self, mapping: dict[EncodableT, EncodableT], seq: str, now: float) -> None:
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(self.keys.control, mapping={**mapping, "updated": repr(float(now))})
            pipe.hincrby(self.keys.control, seq, 1)
            await pipe.execute()

    async def clear(self, *, roster: bool = True) -> None:
        """Forget the control record, and the roster unless ``roster=False`` (a job
        deleted at its end keeps its roster, for the dashboard to show it done)."""
        roster_keys = [self.keys.workers, self.keys.workers_seen] if roster else []
        await self.client.delete(self.keys.control, *roster_keys)


def _field(value: float | None) -> str:
    return "" if value is None else repr(float(value))
