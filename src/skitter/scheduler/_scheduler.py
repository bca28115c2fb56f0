"""The async shell that schedules one project's tasks over its frontier.

The frontier stores tasks and leases them out by priority; this shell decides which
leased task may be downloaded *now*. Project gates come first (a manual pause, the
circuit breaker, the token bucket); then the task waits in its download slot's queue
(``SlotQueues``), and the next download comes from the least busy slot allowed to start
(per-slot concurrency, delay, token bucket, breaker, back-off). Failed attempts become
delayed retries by the retry table, and feed the breakers. All decisions are made by the
sans-I/O cores (``_slotqueue``, ``_retry``, ``_tokenbucket``, ``_breaker``); this module
only sequences them, awaits the frontier, and reports what happened.

How many leased tasks wait here, up to ``max_held``: with a local frontier, whatever is
due is pulled in before each dispatch (so a new high-priority task is seen at once);
with a shared one, more is leased only when none of the tasks held can start (a round
trip saved per page, and the other workers keep their share). Either way a slow host
whose tasks crowd the head of the frontier cannot idle the others: its tasks pile up
here while the others' keep flowing.

Life of a task::

    enqueue ─▶ frontier ─lease─▶ next_request ─▶ (download) ─▶ download_finished
                  ▲                                                │
                  └──── retry (nack with a time) ◀── complete / retry / fail / bad
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from skitter._clock import Clock
from skitter._types import StatsSink
from skitter.exceptions import ConfigError, FrontierUnavailable, InvalidURL
from skitter.frontier import Frontier, Lease, PushOutcome
from skitter.http import Request
from skitter.scheduler._breaker import BreakerState, CircuitBreaker
from skitter.scheduler._permits import ClusterPermits
from skitter.scheduler._retry import RetryPolicy
from skitter.scheduler._slotqueue import SlotQueues, SlotStats
from skitter.scheduler._slots import slot_key
from skitter.scheduler._tokenbucket import TokenBucket, default_burst

__all__ = ["ProjectScheduler"]

log = logging.getLogger("skitter.scheduler")

_DUPLICATE = (PushOutcome.MERGED, PushOutcome.IGNORED)


class ProjectScheduler:
    """Schedules one project's requests. Not thread-safe; lives on one event loop."""

    def __init__(
        self,
        frontier: Frontier,
        *,
        retry: RetryPolicy,
        slots: SlotQueues[Lease],
        stats: StatsSink,
        clock: Clock,
        name: str = "",
        breaker: CircuitBreaker | None = None,
        rate: float | None = None,
        burst: float | None = None,
        max_rate: float | None = None,
        max_burst: float | None = None,
        lease_seconds: float = 600.0,
        batch: int = 64,
        max_held: int = 10_000,
        owner: str = "",
        slot_of: Callable[[Request], str] = slot_key,
        cluster_bucket: Callable[[float, float, float], Awaitable[float]] | None = None,
        cluster_slots: Any = None,
        eager_lease: bool = True,
    ) -> None:
        self.frontier = frontier
        self.retry_policy = retry
        self.slots = slots
        #: The slot a request belongs to (DOWNLOAD_SLOT_BY: host, or host and port).
        self.slot_of = slot_of
        self.name = name
        self.breaker = breaker
        self.max_rate = max_rate
        self.max_burst = max_burst
        self.bucket: TokenBucket | None = None
        self._stats = stats
        self._clock = clock
        self._lease_seconds = lease_seconds
        self._batch = batch
        self._max_held = max_held
        self._owner = owner
        #: Leased tasks waiting in the slot queues (to renew their leases). A set of
        #: leases, not taskids: a stale lease and a newer one of the same task are two.
        self._held: set[Lease] = set()
        self._crawl_delays: dict[str, float | None] = {}
        self._unique = itertools.count(1)
        self._next_renewal = 0.0
        #: The frontier had nothing due at the last look (saves a round trip per dispatch).
        self._dry = False
        #: Tasks this process queued and has not leased yet: a cheap, local estimate
        #: used to pace start requests (the frontier's own counts may cost a round trip).
        self.backlog = 0
        #: Set by a person (UI, API): no dispatches until resumed.
        self.paused = False
        #: Workers: ``take_token(now, rate, burst) -> seconds to wait`` on the bucket the
        #: whole cluster shares; the local bucket then only holds the rate and burst.
        self._cluster_bucket = cluster_bucket
        #: Workers: slot permits shared by the cluster (``RedisPoliteness``).
        self._permits = (
            ClusterPermits(cluster_slots, lease_seconds=lease_seconds)
            if cluster_slots is not None
            else None
        )
        #: Look at the frontier before each dispatch (cheap in memory: new high-priority
        #: tasks are seen at once); a shared frontier is asked only when nothing held can
        #: start, which saves a round trip per page.
        self._eager_lease = eager_lease
        self._token_in_hand = False
        self._token_wait_until = 0.0
        if rate is not None:
            self.set_rate(rate, burst)

    # -- control ------------------------------------------------------------------------
    def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        """Change the project's token bucket now (None = unlimited). Refused above
        MAX_RATE / MAX_BURST with a ConfigError that says so."""
        if rate is not None:
            if rate < 0 or (burst is not None and burst < 0):
                raise ConfigError(f"rate and burst must be >= 0, got {rate!r} and {burst!r}")
            if self.max_rate is not None and rate > self.max_rate:
                raise ConfigError(f"rate {rate:g}/s is above MAX_RATE ({self.max_rate:g}/s)")
            if self.max_burst is not None:
                if burst is None:  # the default (10 x rate) stays within the cap
                    burst = min(default_burst(rate), self.max_burst)
                elif burst > self.max_burst:
                    raise ConfigError(f"burst {burst:g} is above MAX_BURST ({self.max_burst:g})")
        elif self.max_rate is not None:
            raise ConfigError(f"an unlimited rate is above MAX_RATE ({self.max_rate:g}/s)")
        if self.bucket is None:
            if rate is not None:
                self.bucket = TokenBucket(rate, burst, self._clock)
        else:
            self.bucket.reconfigure(rate, burst)
        log.info("Project %s: rate %s, burst %s", self.name, rate, burst)

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """(rate, burst) of the token bucket; (None, None) when unlimited."""
        if self.bucket is None or self.bucket.rate is None:
            return None, None
        return self.bucket.rate, self.bucket.burst

    @property
    def status(self) -> str:
        """running, paused (by a person or the breaker) or checking (breaker probing)."""
        if self.paused:
            return "paused"
        state = self.breaker.state if self.breaker is not None else BreakerState.CLOSED
        if state is BreakerState.OPEN:
            return "paused"
        if state is BreakerState.HALF_OPEN:
            return "checking"
        return "running"

    def wake_up(self) -> None:
        """Tasks were queued behind the scheduler's back (a person retried failures):
        look at the frontier again."""
        self._dry = False

    def resume(self) -> None:
        """Undo a pause, whether a person's or the breaker's."""
        self.paused = False
        if self.breaker is not None:
            self.breaker.reset()
            self._report_breaker()

    # -- queueing ---------------------------------------------------------------------
    async def enqueue(self, requests: Sequence[Request]) -> int:
        """Queue requests; returns how many were new. Duplicates are merged or dropped
        by the frontier and counted as ``dupefilter/filtered``; a request whose URL cannot
        be parsed is dropped with a warning and counted as ``scheduler/invalid_url``."""
        valid: list[Request] = []
        force: list[bool] = []
        for request in requests:
            try:
                if request.dont_filter and not request.has_explicit_taskid:
                    # Scrapy's dont_filter means "fetch this even if seen": it must not
                    # merge with a queued twin either, so it gets a taskid of its own.
                    request.taskid = f"{request.fingerprint.hex()}-{next(self._unique)}"
                else:
                    request.fingerprint  # noqa: B018 - raises InvalidURL now, not later
            except InvalidURL as exc:
                self._stats.inc("scheduler/invalid_url")
                log.warning("Dropped request with an invalid URL: %s", exc)
                continue
            valid.append(request)
            force.append(request.dont_filter)
        if not valid:
            return 0
        outcomes = await self.frontier.push(valid, self._clock.time(), force=force)
        new = 0
        for outcome in outcomes:
            if outcome in _DUPLICATE:
                self._stats.inc("dupefilter/filtered")
            else:
                new += 1
        self._stats.inc("scheduler/enqueued", new)
        self.backlog += new
        if new:
            self._dry = False
        return new

    # -- dispatch ---------------------------------------------------------------------
    async def next_request(self) -> Lease | None:
        """A leased task that may start downloading now, or None: the project's gates
        (pause, breaker, token bucket) are checked first, then the task's slot."""
        if self.paused:
            return None
        bucket = self.bucket if self._cluster_bucket is None else None
        if bucket is not None and bucket.tokens < 1:
            return None
        breaker = self.breaker
        if breaker is not None and not breaker.would_allow:
            self._report_breaker()
            return None
        if self._cluster_bucket is not None and not await self._cluster_token():
            return None
        lease = await self._next_for_slot()
        if lease is not None:
            self._token_in_hand = False
            if bucket is not None:
                bucket.try_take()
            if breaker is not None:
                breaker.allow()
        return lease

    async def _cluster_token(self) -> bool:
        """A token of the cluster's bucket for the next dispatch (kept if nothing could
        start, so none is wasted)."""
        if self._token_in_hand or self.bucket is None or self.bucket.rate is None:
            return True
        now = self._clock.time()
        if now < self._token_wait_until:
            return False
        assert self._cluster_bucket is not None
        wait = await self._cluster_bucket(now, self.bucket.rate, self.bucket.burst)
        if wait > 0:
            self._token_wait_until = now + min(wait, 60.0)
            return False
        self._token_in_hand = True
        return True

    async def _next_for_slot(self) -> Lease | None:
        queues = self.slots
        if self._eager_lease and not self._dry and len(self._held) < self._max_held:
            # Pull what is due into the slot queues first, so that a task of higher
            # priority than those held is seen at once, not after them.
            await self._lease_more()
        now = self._clock.monotonic()
        popped = queues.pop(now)
        while popped is None and len(self._held) < self._max_held:
            if not await self._lease_more():
                return None
            popped = queues.pop(self._clock.monotonic())
        if popped is None:
            return None
        key, lease = popped
        if self._permits is not None and not await self._cluster_permit(key, lease):
            return None
        self._held.discard(lease)
        if lease.retried:
            lease.request.meta["retry_times"] = lease.retried
        return lease

    async def _cluster_permit(self, key: str, lease: Lease) -> bool:
        """Workers: the slot's permit across the cluster (its concurrency, delay and
        back-off hold for all workers). When refused, the local slot waits as long as the
        cluster says and the task goes back to its queue."""
        assert self._permits is not None
        try:
            wait = await self._permits.take(
                key,
                lease,
                self._clock.time(),
                concurrency=self.slots.policies[key].concurrency,
                delay=self.slots.stats(key)[key].delay,
            )
        except FrontierUnavailable:
            self._give_back(key, lease, 1.0)
            raise
        if wait > 0:
            self._give_back(key, lease, wait)
            self._stats.inc("scheduler/cluster_slot_waits")
            return False
        return True

    def _give_back(self, key: str, lease: Lease, wait: float) -> None:
        """Undo a local pop: the slot waits ``wait`` seconds, the task queues again."""
        self.slots.finished(key, self._clock.monotonic(), retry_after=wait)
        self.slots.push(key, lease.request.priority, lease)

    async def _lease_more(self) -> bool:
        """Lease a batch from the frontier into the slot queues; False if none is due."""
        limit = min(self._batch, self._max_held - len(self._held))
        leases = await self.frontier.lease(
            limit, self._clock.time(), self._lease_seconds, self._owner
        )
        if not leases:
            self._dry = True  # until something is queued, or upkeep looks again
            return False
        self.backlog = max(0, self.backlog - len(leases))
        prepare = getattr(self.slot_of, "prepare", None)
        if prepare is not None:  # slots by IP: resolve the batch's new hosts first
            await prepare(lease.request for lease in leases)
        push = self.slots.push
        slot_of = self.slot_of
        for lease in leases:
            self._held.add(lease)
            push(slot_of(lease.request), lease.request.priority, lease)
        return True

    async def download_finished(
        self,
        lease: Lease,
        *,
        latency: float | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        ok: bool = True,
    ) -> None:
        """The download of ``lease`` ended: free its slot, and let the slot learn from
        it (AutoThrottle from the latency, back-off from a 429/503 or Retry-After, the
        slot's breaker from ``ok``). A worker also hands its cluster permit back, with
        the slot's back-off for every worker."""
        key = self.slot_of(lease.request)
        now = self._clock.monotonic()
        self.slots.finished(
            key, now, latency=latency, status=status, retry_after=retry_after, ok=ok
        )
        if self._permits is not None:
            slot = self.slots.stats(key).get(key)
            until = None
            if slot is not None and slot.backoff_until is not None:
                until = self._clock.time() + max(0.0, slot.backoff_until - now)
            await self._permits.give_back(
                lease,
                self._clock.time(),
                backoff_until=until,
                delay=slot.delay if slot is not None else 0.0,
                more_queued=slot is not None and slot.queued > 0,
            )

    def set_crawl_delay(self, slot: str, seconds: float | None) -> None:
        """robots.txt asked for ``Crawl-delay: seconds`` on this slot (cached: cheap)."""
        if self._crawl_delays.get(slot, -1.0) != seconds:
            self._crawl_delays[slot] = seconds
            self.slots.set_crawl_delay(slot, seconds)

    def slot_stats(self) -> dict[str, SlotStats]:
        """Per slot: in flight, queued, done, failed, concurrency, delay, breaker state."""
        return self.slots.stats()

    # -- outcomes -----------------------------------------------------------------------
    async def complete(self, lease: Lease) -> None:
        """The task succeeded: its response and items were fully handled."""
        if self.breaker is not None:
            self.breaker.record_success()
            self._report_breaker()
        await self.frontier.ack(lease, self._clock.time())

    def _failed_attempt(self) -> None:
        if self.breaker is not None:
            self.breaker.record_failure()
            self._report_breaker()

    def _report_breaker(self) -> None:
        """Log and count the breaker's transitions since the last report."""
        assert self.breaker is not None
        for event in self.breaker.take_events():
            if event.new is BreakerState.OPEN:
                self._stats.inc("scheduler/breaker/paused")
                log.warning(
                    "Project %s paused for %.0f s after %d consecutive failures",
                    self.name,
                    self.breaker.pause,
                    event.failures,
                )
            elif event.new is BreakerState.HALF_OPEN:
                self._stats.inc("scheduler/breaker/probing")
                log.info("Project %s: probing with %d tasks", self.name, self.breaker.probes)
            else:
                self._stats.inc("scheduler/breaker/resumed")
                log.info("Project %s resumed", self.name)

    async def retry(self, lease: Lease, reason: str, delay: float | None = None) -> bool:
        """A failed attempt: True if the task was queued again, False if it is FAILED."""
        self._failed_attempt()
        now = self._clock.time()
        retry_at = self.retry_policy.next_attempt(
            lease.retried, now, retries=lease.request.retries, retry_after=delay
        )
        if retry_at is None:
            self._stats.inc("retry/max_reached")
            await self.frontier.nack(lease, now, None, reason)
            return False
        self._stats.inc("retry/count")
        self._stats.inc(f"retry/reason_count/{reason}")
        self._stats.inc(f"retry/attempt_count/{lease.retried + 1}")
        await self.frontier.nack(lease, now, retry_at, reason)
        self.backlog += 1
        self._dry = False
        return True

    async def fail(self, lease: Lease, reason: str) -> None:
        """The task failed for good (not retryable): FAILED with ``reason``."""
        self._failed_attempt()
        await self.frontier.nack(lease, self._clock.time(), None, reason)

    async def bad(self, lease: Lease, reason: str) -> None:
        """The task can never succeed (forbidden, unparseable): BAD with ``reason``."""
        await self.frontier.mark_bad(lease, self._clock.time(), reason)

    # -- idleness and housekeeping --------------------------------------------------------
    async def is_finished(self) -> bool:
        """Nothing queued, delayed, parked or processing."""
        if self._held:
            return False
        counts = await self.frontier.counts(self._clock.time())
        return counts.ready == 0 and counts.delayed == 0 and counts.processing == 0

    async def next_wakeup(self) -> float | None:
        """Seconds until a task may become dispatchable without anything else happening
        (a delayed task comes due, a slot's delay ends), or None if only an event can."""
        if self.paused:
            return None
        now = self._clock.monotonic()
        breaker = self.breaker
        if breaker is not None and breaker.state is BreakerState.OPEN:
            reopens = breaker.reopens_at
            return max(0.0, reopens - now) if reopens is not None else None
        waits: list[float] = []
        if self._cluster_bucket is not None:
            if self._token_wait_until > self._clock.time():
                waits.append(self._token_wait_until - self._clock.time())
        elif self.bucket is not None and self.bucket.tokens < 1:
            waits.append(self.bucket.wait_time())
        due = await self.frontier.next_due()
        if due is not None:
            waits.append(max(0.0, due - self._clock.time()))
        if self._held:
            wait = self.slots.wait_time(now)
            if wait is not None:
                waits.append(wait)
        return min(waits) if waits else None

    @property
    def queued_estimate(self) -> int:
        """Tasks waiting here or in the frontier, as far as this process knows."""
        return self.backlog + len(self._held)

    async def maintain(self, in_flight: Iterable[Lease] = ()) -> None:
        """Periodic upkeep: reclaim expired leases, renew the ones this process holds
        (parked here, or ``in_flight`` in the engine) once a third of their time has
        passed, drop idle slots, report breaker transitions. The engine calls it about once
        a second; for the memory frontier it costs next to nothing."""
        if self.breaker is not None:
            self.breaker.state  # noqa: B018 - moves an OPEN breaker whose pause is over
            self._report_breaker()
        self._dry = False  # delayed tasks may have come due, other workers may have pushed
        now = self._clock.time()
        renew = now >= self._next_renewal
        if renew:
            self._next_renewal = now + self._lease_seconds / 3
            held = list(self._held)
            held.extend(in_flight)
            if held:
                await self.frontier.renew(held, now, self._lease_seconds)
        if self._permits is not None:
            await self._permits.upkeep(now, renew)
        reclaimed = await self.frontier.reclaim_expired(now)
        if reclaimed:
            self._stats.inc("scheduler/leases_reclaimed", reclaimed)
            log.warning("Re-queued %d tasks whose lease expired", reclaimed)

    async def close(self) -> None:
        """The crawl is over here: hand the cluster's permits back at once."""
        if self._permits is not None:
            if self._permits.reused:
                self._stats.inc("scheduler/cluster_permits_reused", self._permits.reused)
            await self._permits.close(self._clock.time())
