"""What a project's dispatches must pass besides its own slot queues: the ``Gate``.

The scheduler's slot queues (``SlotQueues``) already keep each slot's concurrency,
delay, back-off, bucket and breaker for this process. A gate adds what is not theirs
to decide: the project's rate (its token bucket), and anything shared with other
processes. Two gates exist: ``LocalGate`` (the project's token bucket, as a crawl in
one process needs) and ``cluster.ClusterGate`` (the bucket and slot permits every
worker of a distributed job shares, in Redis). The scheduler calls the one it was
given the same way, and never asks which it is.

**Contract.** For one dispatch, the scheduler calls, in this order:

1. ``admit()`` before it looks for a task: True when one more download of the project
   may start now. Nothing is spent: an admission is held until ``dispatched()``, so
   one granted while no slot could start is used by the next dispatch, not wasted.
2. ``acquire(slot, lease, slots)`` for the task it popped from ``slot`` (which its
   slot queues allowed): 0.0 when the download may start, and the gate then holds
   what it took for it until ``release``; else the seconds to wait, and the scheduler
   puts the task back with its slot waiting that long.
3. ``dispatched()`` when it hands the task out (after an ``acquire`` of 0.0).
4. ``release(slot, lease, slots, ok=...)`` once the download ended and the slot queues
   have learned from it (back-off, delay; ``ok``, ``latency`` and ``status``: its
   outcome, for a shared breaker and AutoThrottle): exactly once for each ``acquire``
   of 0.0.

``upkeep(renew)`` runs about once a second (``renew``: the scheduler renews its leases
now, and the gate extends whatever it holds that lapses); ``close()`` once, when the
crawl is over here, gives everything back. ``wait_time()`` is how long ``admit`` will
say no without anything else happening (None: it would not), for the engine's sleep.
``rate`` and ``set_rate`` hold the project's rate and burst (already checked against
MAX_RATE/MAX_BURST by the scheduler; the burst given, never None with a rate).

**Clock.** A gate reads the scheduler's injected ``Clock``: ``monotonic()`` for what it
decides alone (the local bucket, like the slot queues), ``time()`` (epoch seconds) as
"now" for what it shares, which the shared store may replace with its own clock
(Redis's ``TIME``). Every wait it returns is a duration in seconds, good on either.

**Errors.** ``FrontierUnavailable`` from ``admit``, ``acquire`` or ``upkeep`` means the
shared store is out of reach for now: nothing was taken (the scheduler gives the task
back), and the engine waits the outage out as it does the frontier's (and fails the
crawl with ``FrontierOutage`` once FRONTIER_OUTAGE_TIMEOUT has passed). ``release``
and ``close`` do not raise it: what they could not hand back lapses by itself.
``FatalError`` (refused credentials) propagates from any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from skitter._clock import Clock
from skitter.frontier import Lease
from skitter.scheduler._slotqueue import SlotQueues
from skitter.scheduler._tokenbucket import TokenBucket

__all__ = ["Gate", "LeasePolicy", "LocalGate"]


class Gate(Protocol):
    """The project's rate, and anything shared with other processes (see the module
    docstring for the contract)."""

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """(rate, burst); (None, None) when unlimited."""
        ...

    def set_rate(self, rate: float | None, burst: float | None) -> None: ...

    async def admit(self) -> bool: ...

    def dispatched(self) -> None: ...

    async def acquire(self, slot: str, lease: Lease, slots: SlotQueues[Lease]) -> float: ...

    async def release(
        self,
        slot: str,
        lease: Lease,
        slots: SlotQueues[Lease],
        *,
        ok: bool = True,
        latency: float | None = None,
        status: int | None = None,
    ) -> None: ...

    def wait_time(self) -> float | None: ...

    async def upkeep(self, renew: bool) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class LeasePolicy:
    """How a scheduler leases from its frontier.

    ``lease_seconds``: how long a lease lasts unless renewed (PROCESSING_TIMEOUT, or a
    worker's LEASE_SECONDS); ``batch``: the most tasks one lease call takes;
    ``max_held``: the most leased tasks waiting here in the slot queues; ``owner``:
    this process's name in the leases (a worker's id); ``eager``: look at the frontier
    before each dispatch (cheap in memory: a new high-priority task is seen at once)
    rather than only when nothing held can start (a shared frontier: a round trip
    saved per page, and the other workers keep their share); ``eager_held``: eager pulls
    stop while this many are held (None: ``max_held``), so that a local crawl keeps its
    queue in the frontier's compact form instead of thousands of leased requests ahead
    of what its slots can start (when none held can start, more are still leased, up to
    ``max_held``)."""

    lease_seconds: float = 600.0
    batch: int = 64
    max_held: int = 10_000
    owner: str = ""
    eager: bool = True
    eager_held: int | None = None

    def __post_init__(self) -> None:
        if not self.lease_seconds > 0:
            raise ValueError(f"lease_seconds must be > 0, got {self.lease_seconds!r}")
        if self.batch < 1 or self.max_held < 1:
            raise ValueError(f"batch and max_held must be >= 1, got {self.batch}, {self.max_held}")
        if self.eager_held is not None and self.eager_held < 1:
            raise ValueError(f"eager_held must be >= 1, got {self.eager_held}")

    @property
    def eager_limit(self) -> int:
        """How many held tasks stop an eager pull."""
        held = self.eager_held
        return self.max_held if held is None else min(held, self.max_held)


class LocalGate:
    """The project's token bucket, for a crawl in one process: each dispatch takes a
    token; slots need nothing more than their own queues' rules."""

    __slots__ = ("_bucket", "_clock")

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._bucket: TokenBucket | None = None

    def __repr__(self) -> str:
        return f"<LocalGate {self._bucket or 'unlimited'}>"

    @property
    def rate(self) -> tuple[float | None, float | None]:
        bucket = self._bucket
        if bucket is None or bucket.rate is None:
            return None, None
        return bucket.rate, bucket.burst

    def set_rate(self, rate: float | None, burst: float | None) -> None:
        if self._bucket is None:
            if rate is not None:
                self._bucket = TokenBucket(rate, burst, self._clock)
        else:
            self._bucket.reconfigure(rate, burst)

    async def admit(self) -> bool:
        bucket = self._bucket
        return bucket is None or bucket.holds()

    def dispatched(self) -> None:
        if self._bucket is not None:
            self._bucket.try_take()

    async def acquire(self, slot: str, lease: Lease, slots: SlotQueues[Lease]) -> float:
        return 0.0

    async def release(
        self,
        slot: str,
        lease: Lease,
        slots: SlotQueues[Lease],
        *,
        ok: bool = True,
        latency: float | None = None,
        status: int | None = None,
    ) -> None:
        return None

    def wait_time(self) -> float | None:
        bucket = self._bucket
        if bucket is None or bucket.holds():
            return None
        return bucket.wait_time()

    async def upkeep(self, renew: bool) -> None:
        return None

    async def close(self) -> None:
        return None
