"""A worker's download permits from the cluster, and handing them on.

A worker may start a download only with a permit for its slot from the shared politeness
store (``RedisPoliteness``): that is what keeps a host's concurrency, delay and back-off
for all workers together. Taking and returning a permit per page costs two round trips,
most of what a page costs a worker in Redis.

When a slot has no delay and no back-off, its permits only count downloads in flight.
A download that ends while this worker has more tasks queued for the same slot then
keeps its permit as a *spare*, and the next download of that slot starts on it with no
round trip: the cluster's count of downloads in flight is the same either way. A spare
goes back to the cluster when it was not used by the next upkeep (about a second), when
it has been handed on for ``reuse_for`` seconds (so permits keep changing hands between
workers sharing a busy slot), and when the crawl closes. A slot with a delay, a
back-off, a token bucket (DOWNLOAD_SLOT_RATE) or a circuit breaker of its own takes a
fresh permit for every download, which is what moves its pace on (takes its token,
counts its outcome).
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Protocol

from skitter.exceptions import FrontierUnavailable

__all__ = ["ClusterPermits", "PermitStore", "Sample"]

#: AutoThrottle's sample of one download: (latency, status, first delay, max delay,
#: target concurrency, the slot's configured delay).
Sample = tuple[float, int | None, float, float, float, float]


class PermitStore(Protocol):
    """What ``RedisPoliteness`` offers (``FrontierUnavailable`` when Redis is out of
    reach)."""

    async def acquire(
        self,
        slot: str,
        now: float,
        *,
        concurrency: int,
        delay: float,
        lease_seconds: float,
        bucket: tuple[float, float] | None = None,
        breaker: tuple[int, float, int] | None = None,
        throttle_start: float | None = None,
        rules: str = "",
    ) -> tuple[str | None, float]: ...

    async def release(
        self,
        slot: str,
        permit_id: str,
        now: float,
        *,
        backoff_until: float | None = None,
        ok: bool = True,
        breaker: tuple[int, float, int] | None = None,
        sample: Sample | None = None,
        floor: float | None = None,
    ) -> bool: ...

    async def renew(
        self, permits: list[tuple[str, str]], now: float, lease_seconds: float
    ) -> list[bool]: ...


@dataclass(slots=True)
class _Permit:
    slot: str
    id: str
    acquired: float  # epoch seconds
    parked: float = 0.0  # when it became a spare
    breaker: tuple[int, float, int] | None = None  # the slot's, fed at release


class ClusterPermits:
    """The permits this worker holds: one per download in flight, and spares."""

    def __init__(self, store: PermitStore, *, lease_seconds: float, reuse_for: float = 2.0) -> None:
        self.store = store
        self.lease_seconds = lease_seconds
        self.reuse_for = reuse_for
        self._out: dict[Hashable, _Permit] = {}  # download (its lease) -> its permit
        self._spares: dict[str, list[_Permit]] = {}  # slot -> permits to hand on
        #: Downloads started on a spare: round trips saved, for the stats.
        self.reused = 0

    def __len__(self) -> int:
        return len(self._out) + sum(map(len, self._spares.values()))

    async def take(
        self,
        slot: str,
        download: Hashable,
        now: float,
        *,
        concurrency: int,
        delay: float,
        bucket: tuple[float, float] | None = None,
        breaker: tuple[int, float, int] | None = None,
        throttle_start: float | None = None,
        rules: str = "",
    ) -> float:
        """A permit for ``download`` (the scheduler passes the task's lease): 0.0 when it
        has one, else the seconds the cluster says to wait. ``bucket``: the slot's
        ``(rate, burst)``, whose token every download takes from Redis; ``breaker``: its
        ``(threshold, pause, probes)``, which every download asks in Redis (no spare);
        ``rules``: robots.txt read or not (``PermitStore.acquire``)."""
        spares = self._spares.get(slot)
        if spares:
            permit = spares.pop()
            if not spares:
                del self._spares[slot]
            if delay == 0 and bucket is None and breaker is None and throttle_start is None:
                self._out[download] = permit
                self.reused += 1
                return 0.0
            await self._release(permit, now)  # the slot was given a delay meanwhile
        permit_id, wait = await self.store.acquire(
            slot,
            now,
            concurrency=concurrency,
            delay=delay,
            lease_seconds=self.lease_seconds,
            bucket=bucket,
            breaker=breaker,
            throttle_start=throttle_start,
            rules=rules,
        )
        if permit_id is None:
            return wait
        self._out[download] = _Permit(slot, permit_id, now, breaker=breaker)
        return 0.0

    async def give_back(
        self,
        download: Hashable,
        now: float,
        *,
        backoff_until: float | None,
        delay: float,
        more_queued: bool,
        own_pace: bool = False,
        ok: bool = True,
        sample: Sample | None = None,
        floor: float | None = None,
    ) -> None:
        """``download`` ended: keep its permit as a spare if the slot can use it
        at once (more tasks queued here, no delay, no back-off, no bucket or breaker of
        its own), else return it, with the back-off (epoch seconds) that every worker
        must respect, and ``ok`` (its outcome) for the slot's breaker."""
        permit = self._out.pop(download, None)
        if permit is None:
            return
        if (
            more_queued
            and delay == 0
            and not own_pace
            and permit.breaker is None
            and backoff_until is None
            and floor is None
            and now - permit.acquired < self.reuse_for
        ):
            permit.parked = now
            self._spares.setdefault(permit.slot, []).append(permit)
            return
        await self._release(permit, now, backoff_until, ok, sample, floor)

    async def upkeep(self, now: float, renew: bool) -> None:
        """Return the spares nobody used since the last upkeep; with ``renew``, extend
        every permit still held (they are leases, and lapse otherwise)."""
        # Taken out of the spares before the first await: a download may start on one
        # meanwhile, and must not find a permit that is being returned.
        stale: list[_Permit] = []
        for slot, spares in list(self._spares.items()):
            fresh = [p for p in spares if now - p.parked < 0.5]
            stale += (p for p in spares if now - p.parked >= 0.5)
            if fresh:
                self._spares[slot] = fresh
            else:
                del self._spares[slot]
        for permit in stale:
            await self._release(permit, now)
        if renew and len(self):
            held = [(p.slot, p.id) for p in (*self._out.values(), *self._all_spares())]
            await self.store.renew(held, now, self.lease_seconds)

    async def close(self, now: float) -> None:
        """Return every permit: a closing worker must not keep a slot's share for a
        whole lease."""
        permits = [*self._out.values(), *self._all_spares()]
        self._out.clear()
        self._spares.clear()
        for permit in permits:
            await self._release(permit, now)

    def _all_spares(self) -> Iterator[_Permit]:
        for spares in self._spares.values():
            yield from spares

    async def _release(
        self,
        permit: _Permit,
        now: float,
        backoff_until: float | None = None,
        ok: bool | None = None,
        sample: Sample | None = None,
        floor: float | None = None,
    ) -> None:
        """``ok``: the download's outcome, for the slot's breaker (None: none, as for a
        spare or a download still running at close)."""
        with contextlib.suppress(FrontierUnavailable):  # the permit's lease expires
            await self.store.release(
                permit.slot,
                permit.id,
                now,
                backoff_until=backoff_until,
                ok=bool(ok),
                breaker=permit.breaker if ok is not None else None,
                sample=sample,
                floor=floor,
            )
