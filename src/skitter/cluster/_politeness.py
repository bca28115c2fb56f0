"""Politeness that holds for all workers of one job together.

Each worker's ``SlotQueues`` keeps its own slots; with N workers that would be N times
the concurrency and N times the rate a host agreed to. ``RedisPoliteness`` is the shared
part: before a download starts, the worker takes a **permit** for the slot from Redis,
and the project's **token bucket** lives in Redis too, at the rate and burst of the job's
control record (``_control``) once one is set there, so every worker runs at one rate.
Every check-and-take is one Lua script (one round trip), so two workers never both take
the last permit or token.

A slot may start a download, for the whole cluster, when all of these hold:

- fewer than ``concurrency`` unexpired permits are out for it;
- ``delay`` seconds have passed since the previous start, by any worker;
- no back-off (429/503, Retry-After) reported by any worker is running.

Permits are leases. Each is scored by its expiry (``now + lease_seconds``) in a sorted set
per slot, and the acquire script drops expired ones itself: a worker killed while holding
permits cannot take the slot's concurrency with it for longer than one lease. A download
that outlives its lease keeps its permits with ``renew`` (one round trip for all of them).

Every time a decision is made at is Redis's own (``TIME`` inside the scripts): a worker
whose clock runs ahead cannot see other workers' permits lapse early, nor their delays
end early, nor earn tokens early. What a caller passes as ``now`` only moves times it
computed from its own clock (a back-off's end) onto Redis's. ``time_source="caller"``
makes the caller's ``now`` Redis's, for tests that drive time with plain numbers. Idle
slot keys expire (PEXPIRE) ``idle_ttl`` seconds after the last thing they hold has
passed, so a crawl of a million hosts does not leave a million keys behind; a slot
without a delay or back-off keeps no pace key at all.

A slot's own token bucket (DOWNLOAD_SLOT_RATE) is in its pace key too, taken in the
acquire script with the permit: one bucket per slot for the cluster, so N workers
share its rate instead of multiplying it; so is its circuit breaker (failures in a row
counted by ``release``, open and half-open checked by ``acquire``).

Round trips: ``acquire``, ``release``, ``renew`` (any number of permits) and
``take_token`` are one EVALSHA each (plus one SCRIPT LOAD per script after a Redis
restart). Redis errors read as they do from the frontier (``skitter.redis``):
``FrontierUnavailable`` for an outage, OOM or a read-only replica, ``FatalError`` for
refused credentials, so the engine treats them the same way.
"""

from __future__ import annotations

import itertools
import math
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skitter.redis import JobKeys, TimeSource, check_time_source, lua_number, register, translating

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT

__all__ = ["Breaker", "RedisPoliteness"]

#: A slot's circuit breaker: (threshold, pause seconds, probes).
Breaker = tuple[int, float, int]
#: AutoThrottle's sample of one download (see ``ClusterPermits``).
Sample = tuple[float, int | None, float, float, float, float]

#: Where the scripts are: ``skitter/cluster/lua``.
_LUA = "skitter.cluster"
_translated = translating(lambda self: f"Redis for {self.keys.name} (politeness)")


class RedisPoliteness:
    """Download permits per slot and a token bucket, shared by every worker of a job.

    ``redis`` is a ``redis.asyncio.Redis`` client (the caller's to configure and close);
    ``owner`` names this worker in permit ids, for a human reading Redis. ``busy_wait`` is
    the wait ``acquire`` answers when the slot is full: only a finishing download frees
    it, and no worker can know when. ``idle_ttl`` is how long a slot's keys outlive what
    they hold (Scrapy keeps idle slots 60 s). ``time_source``: see the module docstring.
    """

    def __init__(
        self,
        redis: Redis,
        keys: JobKeys,
        *,
        owner: str,
        busy_wait: float = 0.05,
        idle_ttl: float = 60.0,
        time_source: TimeSource = "redis",
    ) -> None:
        self.client = redis
        self.keys = keys
        self.owner = owner
        self.busy_wait = _positive("busy_wait", busy_wait)
        self.idle_ttl = _non_negative("idle_ttl", idle_ttl)
        self.time_source = check_time_source(time_source)
        self._acquire = register(redis, "slot_acquire", "_clock", "_bucket", package=_LUA)
        self._release = register(redis, "slot_release", "_clock", package=_LUA)
        self._renew = register(redis, "slot_renew", "_clock", package=_LUA)
        self._take = register(redis, "bucket_take", "_clock", "_bucket", package=_LUA)
        # Unique across restarts of a worker that keeps its name.
        self._id_prefix = f"{owner}.{uuid.uuid4().hex[:12]}."
        self._ids = itertools.count()

    def __repr__(self) -> str:
        return f"<RedisPoliteness {self.keys.tag} owner={self.owner!r}>"

    @_translated
    async def acquire(
        self,
        slot: str,
        now: float,
        *,
        concurrency: int,
        delay: float,
        lease_seconds: float,
        bucket: tuple[float, float] | None = None,
        breaker: Breaker | None = None,
        throttle_start: float | None = None,
        rules: str = "",
    ) -> tuple[str | None, float]:
        """Take a download permit for ``slot``: ``(permit_id, 0.0)`` when granted, else
        ``(None, seconds to wait before trying again)``.

        ``delay`` is the pause before the next start by any worker, as the caller computed
        it (randomized, AutoThrottle's, robots.txt's Crawl-delay); ``lease_seconds`` how
        long the permit lasts unless released or renewed. ``bucket`` is the slot's
        ``(rate, burst)`` (DOWNLOAD_SLOT_RATE): one token bucket per slot for the whole
        cluster, taken in the same call as the permit (no permit without a token).
        ``breaker`` is the slot's ``(threshold, pause, probes)``: its circuit breaker,
        also one for the cluster (``release`` counts the outcomes). ``rules``: whether
        the caller has read the host's robots.txt (``"known"``, ``"blind"``; ``""`` when
        it does not obey it), see ``slot_acquire.lua``."""
        if rules not in ("", "known", "blind"):
            raise ValueError(f"rules must be '', 'known' or 'blind', got {rules!r}")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"slot concurrency must be an integer >= 1, got {concurrency!r}")
        _non_negative("delay", delay)
        _positive("lease_seconds", lease_seconds)
        permit = f"{self._id_prefix}{next(self._ids)}"
        args: list[EncodableT] = [
            self.time_source,
            lua_number(now),
            concurrency,
            lua_number(delay),
            lua_number(lease_seconds),
            permit,
            lua_number(self.busy_wait),
            lua_number(self.idle_ttl),
        ]
        if bucket is not None:
            rate, burst = bucket
            args += [lua_number(_positive("rate", rate)), lua_number(_positive("burst", burst))]
        else:
            args += ["", ""]
        args += _breaker_args(breaker)
        args += [_limit("throttle_start", throttle_start), rules]
        wait = float(await self._acquire([self.keys.permits(slot), self.keys.pace(slot)], args))
        return (permit, 0.0) if wait <= 0 else (None, wait)

    @_translated
    async def release(
        self,
        slot: str,
        permit_id: str,
        now: float,
        *,
        backoff_until: float | None = None,
        ok: bool = True,
        breaker: Breaker | None = None,
        sample: Sample | None = None,
        floor: float | None = None,
    ) -> bool:
        """Give the permit back. ``backoff_until`` (epoch seconds, after a 429/503 or a
        Retry-After) keeps every worker off the slot until then; back-offs from several
        workers never shorten each other. With the slot's ``breaker`` (see ``acquire``),
        ``ok`` (the download's outcome) feeds it. ``floor``: the slot's delay with the
        Crawl-delay its download just read, for workers that have not read it yet (see
        ``acquire``'s ``rules``). False if the permit had lapsed."""
        args = [
            self.time_source,
            lua_number(now),
            permit_id,
            "" if backoff_until is None else lua_number(backoff_until),
            lua_number(self.idle_ttl),
        ]
        threshold, pause, probes = _breaker_args(breaker)
        args += ["" if breaker is None else "1" if ok else "0", threshold, probes, pause]
        if sample is not None:
            latency, status, *throttle = sample
            args += [lua_number(latency), "" if status is None else str(status)]
            args += [lua_number(_non_negative("throttle", value)) for value in throttle]
        else:
            args += [""] * 6
        args.append("" if floor is None else lua_number(_non_negative("floor", floor)))
        released = await self._release([self.keys.permits(slot), self.keys.pace(slot)], args)
        return bool(released)

    @_translated
    async def renew(
        self, permits: Sequence[tuple[str, str]], now: float, lease_seconds: float
    ) -> list[bool]:
        """Extend ``(slot, permit_id)`` permits to ``now + lease_seconds``, in one round
        trip per shard holding them. False for a permit that had lapsed: it is not brought
        back, since the slot may have handed its place to another download already."""
        if not permits:
            return []
        _positive("lease_seconds", lease_seconds)
        header = [
            self.time_source,
            lua_number(now),
            lua_number(lease_seconds),
            lua_number(self.idle_ttl),
        ]
        # one script call per shard: on a Redis Cluster each must touch one slot
        by_shard: dict[int, list[int]] = {}
        for i, (slot, _) in enumerate(permits):
            by_shard.setdefault(self.keys.shard_of(slot), []).append(i)
        renewed = [False] * len(permits)
        for members in by_shard.values():
            keys = [self.keys.permits(permits[i][0]) for i in members]
            args = [*header, *(permits[i][1] for i in members)]
            for i, flag in zip(members, await self._renew(keys, args), strict=True):
                renewed[i] = bool(flag)
        return renewed

    @_translated
    async def take_token(
        self,
        now: float,
        rate: float,
        burst: float,
        *,
        max_rate: float | None = None,
        max_burst: float | None = None,
    ) -> float:
        """Take a token from the project's bucket: 0.0 if one was taken, else the seconds
        until one is available (``inf`` if never: a rate of 0, or a burst below 1).

        The rate and burst are the job's control record's once it has one (set from the
        dashboard or any worker's UI: every worker's next call uses it); until then this
        worker's own ``rate`` and ``burst``. ``max_rate`` and ``max_burst`` (MAX_RATE,
        MAX_BURST) are this worker's limits: a record beyond them is not used (the
        worker keeps its own, as it refuses to apply it), and ``max_burst`` caps the
        default burst of a record that leaves the burst out. Tokens already earned are
        kept, capped at a new burst."""
        _non_negative("rate", rate)
        _non_negative("burst", burst)
        args = [
            self.time_source,
            lua_number(now),
            lua_number(rate),
            lua_number(burst),
            _limit("max_burst", max_burst),
            _limit("max_rate", max_rate),
        ]
        return float(await self._take([self.keys.bucket, self.keys.control], args))

    @_translated
    async def clear(self) -> int:
        """Delete every politeness key of the job (``flush_on_start``); the number deleted.

        Slot keys are found with SCAN, so this costs a round trip per thousand keys; the
        crawl should not be running."""
        deleted = int(await self.client.delete(self.keys.bucket))
        patterns = [p for kind in ("permits", "pace", "robots") for p in self.keys.scan(kind)]
        for pattern in patterns:
            batch: list[bytes] = []
            async for key in self.client.scan_iter(match=pattern, count=1000):
                batch.append(key)
                if len(batch) >= 1000:
                    deleted += int(await self.client.delete(*batch))
                    batch.clear()
            if batch:
                deleted += int(await self.client.delete(*batch))
        return deleted


def _non_negative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return float(value)


def _breaker_args(breaker: Breaker | None) -> list[str]:
    if breaker is None:
        return ["", "", ""]
    threshold, pause, probes = breaker
    if threshold < 1 or probes < 1:
        raise ValueError(f"breaker threshold and probes must be >= 1, got {breaker!r}")
    return [str(int(threshold)), lua_number(_non_negative("pause", pause)), str(int(probes))]


def _limit(name: str, value: float | None) -> str:
    return "" if value is None else lua_number(_non_negative(name, value))


def _positive(name: str, value: float) -> float:
    if _non_negative(name, value) <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)
