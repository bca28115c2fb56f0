"""``ClusterGate``: the scheduler's ``Gate`` for a worker of a distributed job.

Each worker's ``SlotQueues`` keeps its own slots; alone, N workers would send N times
the concurrency and N times the rate a host agreed to. This gate makes both hold for
the whole job:

- **the project's rate**: a dispatch takes a token from the bucket every worker shares
  (``RedisPoliteness.take_token``, one round trip), at the rate of the job's control
  record once one is set there (the script reads it: a rate set from the dashboard
  holds for every worker from its next token on); a token taken while no slot could
  start is kept for the next dispatch. When the bucket is empty the gate answers no
  without asking again until the wait Redis named is over (at most a minute, so a rate
  raised meanwhile is seen);
- **each slot's concurrency, delay, back-off and token bucket**: a download starts only
  with the slot's permit from Redis (``ClusterPermits``, which hands a permit on to the
  next download of a busy slot with no round trip; a slot with a DOWNLOAD_SLOT_RATE
  also takes a token of its one cluster-wide bucket, in the same call), and gives it
  back when it ends, with the back-off the slot met, which then holds for every worker;
- **each slot's circuit breaker** (DOWNLOAD_SLOT_BREAKER_THRESHOLD): the outcome goes
  back with the permit, and the breaker in Redis opens for every worker after that many
  failures in a row by any of them (the local breakers still count their own);
- **each slot's AutoThrottle**: every worker's latency samples go back with the permit
  and move one delay per slot in Redis, which the slot's pace then uses.

The local slot queues still decide first, so a worker never asks Redis for a slot it
could not start anyway. Times sent to Redis are this worker's ``clock.time()``, which
the scripts replace with Redis's own (see ``_politeness``). Redis out of reach is
``FrontierUnavailable`` from ``admit``, ``acquire`` and ``upkeep``, as the contract
says; permits that could not be handed back lapse with their lease.
"""

from __future__ import annotations

from typing import Protocol

from skitter._clock import Clock
from skitter._types import StatsSink
from skitter.cluster._permits import ClusterPermits, PermitStore
from skitter.frontier import Lease
from skitter.scheduler import RateLimits, SlotPolicy, SlotQueues

__all__ = ["ClusterGate", "SharedBucket"]

#: The longest the gate trusts Redis's "no token for N seconds" before asking again.
_MAX_TOKEN_WAIT = 60.0


class SharedBucket(PermitStore, Protocol):
    """What ``RedisPoliteness`` offers: slot permits and the job's token bucket."""

    async def take_token(
        self,
        now: float,
        rate: float,
        burst: float,
        *,
        max_rate: float | None = None,
        max_burst: float | None = None,
    ) -> float: ...


class ClusterGate:
    """The job's shared token bucket and slot permits, for one worker's scheduler."""

    def __init__(
        self,
        store: SharedBucket,
        *,
        clock: Clock,
        stats: StatsSink,
        lease_seconds: float,
        limits: tuple[float | None, float | None] = (None, None),
    ) -> None:
        self._store = store
        self._limits = limits  # MAX_RATE, MAX_BURST
        self._clock = clock
        self._stats = stats
        self.permits = ClusterPermits(store, lease_seconds=lease_seconds)
        self._rate: float | None = None
        self._burst: float | None = None
        self._token_in_hand = False
        self._token_wait_until = 0.0
        #: Downloads whose permit was taken before this worker read the host's robots.txt.
        self._blind: set[Lease] = set()

    def __repr__(self) -> str:
        return f"<ClusterGate {self._store!r} rate={self._rate} burst={self._burst}>"

    @property
    def rate(self) -> tuple[float | None, float | None]:
        return (self._rate, self._burst) if self._rate is not None else (None, None)

    def set_rate(self, rate: float | None, burst: float | None) -> None:
        self._rate, self._burst = rate, burst if rate is not None else None
        self._token_wait_until = 0.0  # the wait was for the old rate: ask again

    async def admit(self) -> bool:
        """A token of the job's bucket for the next dispatch (kept if nothing could
        start, so none is wasted)."""
        rate, burst = self._rate, self._burst
        if self._token_in_hand or rate is None or burst is None:
            return True
        now = self._clock.time()
        if now < self._token_wait_until:
            return False
        max_rate, max_burst = self._limits
        wait = await self._store.take_token(
            now, rate, burst, max_rate=max_rate, max_burst=max_burst
        )
        if wait > 0:
            self._token_wait_until = now + min(wait, _MAX_TOKEN_WAIT)
            return False
        self._token_in_hand = True
        return True

    def dispatched(self) -> None:
        self._token_in_hand = False

    async def acquire(self, slot: str, lease: Lease, slots: SlotQueues[Lease]) -> float:
        """The slot's permit across the job (its concurrency, delay and back-off hold
        for every worker): 0.0, or how long the job says the slot must wait."""
        policy = slots.policies[slot]
        throttle = _throttle(policy, slots)
        if throttle is None:
            delay = slots.stats(slot)[slot].delay
        else:  # the cluster's AutoThrottle delay, above the slot's own floor
            delay = max(policy.delay, slots.crawl_delay(slot))
        known = slots.rules_known(slot)
        wait = await self.permits.take(
            slot,
            lease,
            self._clock.time(),
            concurrency=policy.concurrency,
            delay=delay,
            bucket=_bucket(policy),
            breaker=_breaker(policy),
            throttle_start=None if throttle is None else throttle[0],
            rules="" if known is None else "known" if known else "blind",
        )
        if wait > 0:
            self._stats.inc("scheduler/cluster_slot_waits")
        elif known is False:
            self._blind.add(lease)
        return wait

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
        """Hand the permit back (or on, to the slot's next download), with the slot's
        back-off moved onto the epoch clock, for every worker, and the outcome ``ok``
        for the slot's breaker (shared by every worker too)."""
        state = slots.stats(slot).get(slot)
        policy = slots.policies[slot]
        throttle = _throttle(policy, slots)
        now = self._clock.time()
        until = None
        if state is not None and state.backoff_until is not None:
            until = now + max(0.0, state.backoff_until - self._clock.monotonic())
        floor = None
        if lease in self._blind:
            # Its permit carried no Crawl-delay, and the page left only once robots.txt
            # came in (about now): no worker starts the slot before one delay from now,
            # and those that have not read robots.txt yet pace by that delay.
            self._blind.discard(lease)
            floor = state.delay if state is not None else 0.0
            if floor > 0:
                until = max(until or 0.0, now + floor)
        await self.permits.give_back(
            lease,
            now,
            backoff_until=until,
            delay=state.delay if state is not None else 0.0,
            more_queued=state is not None and state.queued > 0,
            own_pace=_bucket(policy) is not None or throttle is not None,
            ok=ok,
            sample=None if throttle is None or latency is None else (latency, status, *throttle),
            floor=floor,
        )

    def wait_time(self) -> float | None:
        left = self._token_wait_until - self._clock.time()
        return left if left > 0 else None

    async def upkeep(self, renew: bool) -> None:
        await self.permits.upkeep(self._clock.time(), renew)

    async def close(self) -> None:
        """Hand every permit back at once: a closing worker must not keep a slot's
        share for a whole lease."""
        self._blind.clear()
        if self.permits.reused:
            self._stats.inc("scheduler/cluster_permits_reused", self.permits.reused)
        await self.permits.close(self._clock.time())


def _throttle(
    policy: SlotPolicy, slots: SlotQueues[Lease]
) -> tuple[float, float, float, float] | None:
    """AutoThrottle's (first delay, max delay, target concurrency, floor) for the slot,
    or None when it is not throttled."""
    throttle = slots.throttle
    if throttle is None or not policy.throttle:
        return None
    return (
        throttle.initial_delay(policy.delay),
        throttle.max_delay,
        throttle.target_concurrency,
        policy.delay,
    )


def _breaker(policy: SlotPolicy) -> tuple[int, float, int] | None:
    """The slot's circuit breaker ``(threshold, pause, probes)``, or None without one."""
    if policy.breaker_threshold <= 0:
        return None
    return policy.breaker_threshold, policy.breaker_pause, policy.breaker_probes


def _bucket(policy: SlotPolicy) -> tuple[float, float] | None:
    """The slot's ``(rate, burst)``, its burst defaulted as the local bucket's is."""
    if policy.rate is None:
        return None
    return policy.rate, RateLimits().burst_for(policy.rate, policy.burst)
