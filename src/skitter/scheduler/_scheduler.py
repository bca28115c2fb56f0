"""The async shell that schedules one project's tasks over its frontier.

The frontier stores tasks and leases them out by priority; this shell decides which
leased task may be downloaded *now*: one whose download slot (``SlotQueues``: per-slot
concurrency, delay, token bucket, breaker, back-off) may start, the least busy first,
once the project's gates agree (a manual pause, the circuit breaker, then the ``Gate``:
the project's token bucket shared by every worker of a distributed job, asked only once
a slot may start, and the slot's permit across the job). Failed attempts become
delayed retries by the retry table, and feed the breakers. All decisions are made by the
sans-I/O cores (``_slotqueue``, ``_retry``, ``_tokenbucket``, ``_breaker``) and the gate;
this module only sequences them, awaits the frontier, and reports what happened.

How many leased tasks wait here (``LeasePolicy``): a local frontier (``eager``) is
asked before each dispatch while fewer than ``eager_held`` are held (a new urgent task is
seen at once); beyond that, or with a shared frontier, more is leased (up to ``max_held``)
only when no task held can start, so a slow host crowding the frontier idles no other.

Life of a task::

    enqueue ─▶ frontier ─lease─▶ next_request ─▶ (download) ─▶ record (its report)
                  ▲                                                │
                  └──── retry (nack with a time) ◀── complete / retry / fail / bad
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence

from skitter._clock import Clock
from skitter._types import DownloadReport, StatsSink
from skitter.exceptions import FrontierUnavailable, InvalidURL
from skitter.frontier import Frontier, Lease, PushOutcome
from skitter.http import Request
from skitter.scheduler._breaker import BreakerState, CircuitBreaker
from skitter.scheduler._gate import Gate, LeasePolicy, LocalGate
from skitter.scheduler._retry import RetryPolicy
from skitter.scheduler._screen import Screen
from skitter.scheduler._slotqueue import SlotQueues, SlotStats
from skitter.scheduler._slots import slot_key
from skitter.scheduler._taskid import own_taskid
from skitter.scheduler._tokenbucket import RateLimits

__all__ = ["DONE", "ProjectScheduler"]

log = logging.getLogger("skitter.scheduler")

_DUPLICATE = (PushOutcome.MERGED, PushOutcome.IGNORED)
DONE = "tasks/done"  # settled for good (ok, FAILED, BAD); a stale lease's settle adds 0


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
        gate: Gate | None = None,
        lease: LeasePolicy | None = None,
        breaker: CircuitBreaker | None = None,
        rate: float | None = None,
        burst: float | None = None,
        limits: RateLimits | None = None,
        slot_of: Callable[[Request], str] = slot_key,
        screen: Screen | None = None,
    ) -> None:
        self.frontier, self.screen = frontier, screen  # screen: Scrapy's dupe filter, if set
        self.retry_policy = retry
        self.slots = slots
        #: The slot a request belongs to (DOWNLOAD_SLOT_BY: host, or host and port).
        self.slot_of = slot_of
        self.name, self.breaker = name, breaker
        #: MAX_RATE and MAX_BURST, checked by ``set_rate``.
        self.limits = limits or RateLimits()
        #: The project's rate, and what other processes share (a worker's permits).
        self.gate: Gate = gate if gate is not None else LocalGate(clock)
        self.lease_policy = lease or LeasePolicy()
        self._stats, self._clock = stats, clock
        #: Leased tasks waiting in the slot queues (to renew their leases). A set of
        #: leases, not taskids: a stale lease and a newer one of the same task are two.
        self._held: set[Lease] = set()
        #: The slot each download started in, freed when it ends (a middleware may move it).
        self._started_in: dict[Lease, str] = {}
        self._crawl_delays: dict[str, float | None] = {}
        #: Tags of dont_filter requests' own taskids: unique to this scheduler, so two
        #: workers (or a resumed run) never give two such requests the same taskid.
        self._unique = (f"{uuid.uuid4().hex[:8]}.{n}" for n in itertools.count(1))
        self._next_renewal = 0.0
        #: The frontier had nothing due at the last look (saves a round trip per dispatch).
        self._dry = False
        self._backlog, self._paused = 0, False
        if rate is not None:
            self.set_rate(rate, burst)

    # -- control ------------------------------------------------------------------------
    def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        """Change the project's rate and burst now (None = unlimited; burst None = 10 x
        rate, within MAX_BURST). Refused above MAX_RATE / MAX_BURST with a ConfigError
        that says so."""
        burst = self.limits.check(rate, burst)
        self.gate.set_rate(rate, burst)
        log.info("Project %s: rate %s, burst %s", self.name, rate, burst)

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """(rate, burst) of the project's token bucket; (None, None) when unlimited."""
        return self.gate.rate

    @property
    def held(self) -> int:
        """Tasks leased here, waiting in their slot's queue for a download to start."""
        return len(self._held)

    @property
    def paused(self) -> bool:
        """Paused by a person (``pause``): no dispatches until ``resume``."""
        return self._paused

    @property
    def status(self) -> str:
        """running, paused (by a person or the breaker) or checking (breaker probing)."""
        if self._paused:
            return "paused"
        state = self.breaker.state if self.breaker is not None else BreakerState.CLOSED
        if state is BreakerState.OPEN:
            return "paused"
        return "checking" if state is BreakerState.HALF_OPEN else "running"

    def pause(self) -> None:
        """Dispatch nothing more until ``resume``; running downloads finish."""
        self._paused = True

    def resume(self) -> None:
        """Undo a pause, whether a person's or the breaker's."""
        self._paused = False
        if self.breaker is not None:
            self.breaker.reset()
            self._report_breaker()

    async def retry_failed(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue FAILED tasks again (all, or by domain or reason substring); how many."""
        count = await self.frontier.retry_failed(self._clock.time(), domain=domain, reason=reason)
        return self._requeued(count, "scheduler/failed_retried")

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue BAD tasks again, filtered as ``retry_failed``; how many."""
        count = await self.frontier.requeue_bad(self._clock.time(), domain=domain, reason=reason)
        return self._requeued(count, "scheduler/bad_requeued")

    def _requeued(self, count: int, stat: str) -> int:
        """Tasks queued again behind the dispatcher's back: count, look again."""
        if count:
            self._backlog += count
            self._dry = False
            self._stats.inc(stat, count)
        return count

    # -- queueing ---------------------------------------------------------------------
    async def enqueue(
        self, requests: Sequence[Request], *, outcomes: list[tuple[Request, bool]] | None = None
    ) -> int:
        """Queue requests; returns how many were new. Duplicates are merged or dropped by
        the frontier (first by the ``screen``'s dupe filter), a URL that cannot be parsed
        with a warning (``scheduler/invalid_url``); ``outcomes`` gets (request, queued)."""
        valid, force = list[Request](), list[bool]()
        for request in requests:
            try:
                if request.dont_filter:
                    own_taskid(request, next(self._unique))
                else:
                    request.fingerprint  # noqa: B018 - raises InvalidURL now, not later
            except InvalidURL as exc:
                self._stats.inc("scheduler/invalid_url")
                log.warning("Dropped request with an invalid URL: %s", exc)
                if outcomes is not None:
                    outcomes.append((request, False))
                continue
            valid.append(request)
            force.append(request.dont_filter)
        if self.screen is not None:  # a project's own dupe filter or fingerprinter: rare
            valid, force = self.screen.screened(valid, outcomes)
        if not valid:
            return 0
        flags = force if any(force) else None  # none forced: the usual batch, a page's links
        pushed = await self.frontier.push(valid, self._clock.time(), force=flags)
        if outcomes is None:  # in C: most links are duplicates, counted once a batch
            dropped = sum(map(_DUPLICATE.__contains__, pushed))
        else:
            dropped = 0
            for request, queued in zip(valid, (o not in _DUPLICATE for o in pushed), strict=False):
                dropped += not queued
                outcomes.append((request, queued))
        new = len(pushed) - dropped
        if dropped:
            self._stats.inc("dupefilter/filtered", dropped)
        self._stats.inc("scheduler/enqueued", new)
        self._backlog += new
        if new:
            self._dry = False
        return new

    # -- dispatch ---------------------------------------------------------------------
    async def next_request(self) -> Lease | None:
        """A leased task that may start downloading now, or None: the project's gates
        (pause, breaker, the gate's token once a slot may start) come first, then the
        task's slot, and the gate's permit for it."""
        if self._paused:
            return None
        breaker = self.breaker
        if breaker is not None and not breaker.would_allow:
            self._report_breaker()
            return None
        gate = self.gate
        if gate.wait_time() is not None or not await self._task_ready() or not await gate.admit():
            return None
        lease = await self._next_for_slot(gate)
        if lease is not None:
            gate.dispatched()
            if breaker is not None:
                breaker.allow()
        return lease

    async def _task_ready(self) -> bool:
        """Whether a slot may start a task now, leasing more if none may: the gate's token
        is asked only then (a worker holding the job's token with nothing to send delays
        another worker's task to the next one)."""
        queues, max_held = self.slots, self.lease_policy.max_held
        while queues.wait_time(self._clock.monotonic()) != 0.0:
            if len(self._held) >= max_held or not await self._lease_more():
                return False
        return True

    async def _next_for_slot(self, gate: Gate) -> Lease | None:
        queues, policy = self.slots, self.lease_policy
        if policy.eager and not self._dry and len(self._held) < policy.eager_limit:
            # Pull what is due first: a task of higher priority than those held is seen now.
            await self._lease_more()
        popped = queues.pop(self._clock.monotonic())
        if popped is None:  # none ready after all (the eager lease's await)
            return None
        key, lease = popped
        try:
            wait = await gate.acquire(key, lease, queues)
        except FrontierUnavailable:
            self._give_back(key, lease, 1.0)
            raise
        if wait > 0:  # the slot waits as long as the gate says; the task queues again
            self._give_back(key, lease, wait)
            return None
        self._held.discard(lease)
        self._started_in[lease] = key
        if lease.retried:
            lease.request.meta["retry_times"] = lease.retried
        return lease

    def _give_back(self, key: str, lease: Lease, wait: float) -> None:
        """Undo a local pop: the slot waits ``wait`` seconds, the task queues again."""
        self.slots.finished(key, self._clock.monotonic(), retry_after=wait)
        self.slots.push(key, lease.request.priority, lease)

    async def _lease_more(self) -> bool:
        """Lease a batch from the frontier into the slot queues; False if none is due."""
        policy = self.lease_policy
        limit = min(policy.batch, policy.max_held - len(self._held))
        leases = await self.frontier.lease(
            limit, self._clock.time(), policy.lease_seconds, policy.owner
        )
        if not leases:
            self._dry = True  # until something is queued, or upkeep looks again
            return False
        self._backlog = max(0, self._backlog - len(leases))
        prepare = getattr(self.slot_of, "prepare", None)
        if prepare is not None:  # slots by IP: resolve the batch's new hosts first
            await prepare(lease.request for lease in leases)
        push = self.slots.push
        slot_of = self.slot_of
        for lease in leases:
            self._held.add(lease)
            push(slot_of(lease.request), lease.request.priority, lease)
        return True

    async def record(self, lease: Lease, report: DownloadReport) -> None:
        """The download of ``lease`` ended (``report`` says how): the slot takes robots.txt's
        Crawl-delay, when robots.txt is obeyed (while the download still counts, so the next
        start waits for it); the slot is freed and learns from the download (AutoThrottle from
        the latency, back-off from a 429/503 or Retry-After, the slot's breaker from ``ok``);
        then the gate releases what it took for it (a worker's permit, with the slot's delay and
        back-off for every worker)."""
        key = self._started_in.pop(lease, None) or self.slot_of(lease.request)
        slots = self.slots
        now = self._clock.monotonic()
        if report.robots:
            delay = report.crawl_delay  # cached: the slots hear only of a change
            if self._crawl_delays.get(key, -1.0) != delay:
                self._crawl_delays[key] = delay
                slots.set_crawl_delay(key, delay, now)
        slots.finished(
            key,
            now,
            latency=report.latency,
            status=report.status,
            retry_after=report.retry_after,
            ok=report.ok,
        )
        await self.gate.release(
            key, lease, slots, ok=report.ok, latency=report.latency, status=report.status
        )

    def slot_stats(self) -> dict[str, SlotStats]:
        """Per slot: in flight, queued, done, failed, concurrency, delay, breaker state."""
        return self.slots.stats()

    # -- outcomes -----------------------------------------------------------------------
    async def complete(self, lease: Lease) -> None:
        """The task succeeded: its response and items were fully handled."""
        if self.breaker is not None:
            self.breaker.record_success()
            self._report_breaker()
        self._stats.inc(DONE, int(await self.frontier.ack(lease, self._clock.time())))

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

    async def retry(
        self, lease: Lease, reason: str, delay: float | None = None, counted_as: str = ""
    ) -> bool:
        """A failed attempt: True if the task was queued again, False if it is FAILED.
        ``reason`` is for its record; the stats count it by ``counted_as`` or ``reason``."""
        self._failed_attempt()
        now = self._clock.time()
        retry_at = self.retry_policy.next_attempt(
            lease.retried, now, retries=lease.request.retries, retry_after=delay
        )
        if retry_at is None:
            self._stats.inc("retry/max_reached")
            self._stats.inc(DONE, int(await self.frontier.nack(lease, now, None, reason)))
            return False
        self._stats.inc("retry/count")
        self._stats.inc(f"retry/reason_count/{counted_as or reason}")
        self._stats.inc(f"retry/attempt_count/{lease.retried + 1}")
        await self.frontier.nack(lease, now, retry_at, reason)
        self._backlog += 1
        self._dry = False
        return True

    async def fail(self, lease: Lease, reason: str) -> None:
        """The task failed for good (not retryable): FAILED with ``reason``."""
        self._failed_attempt()
        settled = await self.frontier.nack(lease, self._clock.time(), None, reason)
        self._stats.inc(DONE, int(settled))

    async def bad(self, lease: Lease, reason: str) -> None:
        """The task can never succeed (forbidden, unparseable): BAD with ``reason``."""
        self._stats.inc(DONE, int(await self.frontier.mark_bad(lease, self._clock.time(), reason)))

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
        if self._paused:
            return None
        now = self._clock.monotonic()
        breaker = self.breaker
        if breaker is not None and breaker.state is BreakerState.OPEN:
            reopens = breaker.reopens_at
            return max(0.0, reopens - now) if reopens is not None else None
        waits: list[float] = []
        due = await self.frontier.next_due()
        if due is not None:
            waits.append(max(0.0, due - self._clock.time()))
        if self._held:
            wait = self.slots.wait_time(now)
            if wait is not None:
                waits.append(wait)
        # A task goes when its slot lets it *and* the project's gate has a token: a
        # slot ready now while the bucket is empty is a wait for the token, not a spin.
        gate_wait = self.gate.wait_time()
        if gate_wait is None:
            return min(waits) if waits else None
        return max(gate_wait, min(waits)) if waits else gate_wait

    @property
    def queued_estimate(self) -> int:
        """Tasks waiting here or in the frontier, as far as this process knows: paces
        start requests without the round trip the frontier's counts may cost."""
        return self._backlog + len(self._held)

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
        lease_seconds = self.lease_policy.lease_seconds
        renew = now >= self._next_renewal
        if renew:
            self._next_renewal = now + lease_seconds / 3
            held = [*self._held, *in_flight]
            if held:
                await self.frontier.renew(held, now, lease_seconds)
        await self.gate.upkeep(renew)
        reclaimed = await self.frontier.reclaim_expired(now)
        if reclaimed:
            self._stats.inc("scheduler/leases_reclaimed", reclaimed)
            log.warning("Re-queued %d tasks whose lease expired", reclaimed)

    async def close(self) -> None:
        """The crawl is over here: the gate hands back what it holds (a worker's
        permits) at once."""
        await self.gate.close()
