"""The async shell that schedules one project's tasks over its frontier.

The frontier stores tasks and leases them out by priority; this shell decides which
leased task may be downloaded *now*: it keeps per-slot politeness (concurrency and
delay), turns failed attempts into delayed retries by the retry table, counts what it
filtered, and parks tasks whose slot is busy instead of blocking the whole crawl on
them. All decisions are made by the sans-I/O cores (``_slots``, ``_retry``); this
module only sequences them and awaits the frontier.

Life of a task::

    enqueue ─▶ frontier ─lease─▶ next_request ─▶ (download) ─▶ download_finished
                  ▲                                                │
                  └──── retry (nack with a time) ◀── complete / retry / fail / bad
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Sequence

from skitter._clock import Clock
from skitter._types import StatsSink
from skitter.exceptions import InvalidURL
from skitter.frontier import Frontier, Lease, PushOutcome
from skitter.http import Request
from skitter.scheduler._retry import RetryPolicy
from skitter.scheduler._slots import SlotTable, slot_key

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
        slots: SlotTable,
        stats: StatsSink,
        clock: Clock,
        lease_seconds: float = 600.0,
        prefetch: int = 1,
        max_parked: int = 1000,
        owner: str = "",
    ) -> None:
        self.frontier = frontier
        self.retry_policy = retry
        self.slots = slots
        self._stats = stats
        self._clock = clock
        self._lease_seconds = lease_seconds
        self._prefetch = prefetch
        self._max_parked = max_parked
        self._owner = owner
        self._buffer: deque[Lease] = deque()
        self._parked: dict[str, deque[Lease]] = {}
        self._parked_count = 0
        self._unique = itertools.count(1)
        #: Tasks this process queued and has not leased yet: a cheap, local estimate
        #: used to pace start requests (the frontier's own counts may cost a round trip).
        self.backlog = 0

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
        return new

    # -- dispatch ---------------------------------------------------------------------
    async def next_request(self) -> Lease | None:
        """A leased task whose slot may start a download now, or None."""
        now = self._clock.monotonic()
        if self._parked:
            lease = self._take_parked(now)
            if lease is not None:
                return lease
        while self._parked_count < self._max_parked:
            if not self._buffer:
                leases = await self.frontier.lease(
                    self._prefetch, self._clock.time(), self._lease_seconds, self._owner
                )
                if not leases:
                    return None
                self.backlog = max(0, self.backlog - len(leases))
                self._buffer.extend(leases)
            lease = self._buffer.popleft()
            key = slot_key(lease.request)
            if key not in self._parked and self.slots.get(key).ready(now):
                return self._start(key, lease, now)
            queue = self._parked.get(key)
            if queue is None:
                queue = self._parked[key] = deque()
            queue.append(lease)
            self._parked_count += 1
        return None

    def _take_parked(self, now: float) -> Lease | None:
        for key, queue in self._parked.items():
            if self.slots.get(key).ready(now):
                lease = queue.popleft()
                self._parked_count -= 1
                if not queue:
                    del self._parked[key]
                return self._start(key, lease, now)
        return None

    def _start(self, key: str, lease: Lease, now: float) -> Lease:
        self.slots.start(key, now)
        if lease.retried:
            lease.request.meta["retry_times"] = lease.retried
        return lease

    def download_finished(self, lease: Lease) -> None:
        """The download of ``lease`` ended (in any way): free its slot."""
        key = slot_key(lease.request)
        self.slots.finish(key, key in self._parked, self._clock.monotonic())

    # -- outcomes -----------------------------------------------------------------------
    async def complete(self, lease: Lease) -> None:
        """The task succeeded: its response and items were fully handled."""
        await self.frontier.ack(lease.taskid, self._clock.time(), self._owner)

    async def retry(self, lease: Lease, reason: str, delay: float | None = None) -> bool:
        """A failed attempt: True if the task was queued again, False if it is FAILED."""
        now = self._clock.time()
        retry_at = self.retry_policy.next_attempt(
            lease.retried, now, retries=lease.request.retries, retry_after=delay
        )
        if retry_at is None:
            self._stats.inc("retry/max_reached")
            await self.frontier.nack(lease.taskid, now, None, reason, self._owner)
            return False
        self._stats.inc("retry/count")
        self._stats.inc(f"retry/reason_count/{reason}")
        self._stats.inc(f"retry/attempt_count/{lease.retried + 1}")
        await self.frontier.nack(lease.taskid, now, retry_at, reason, self._owner)
        self.backlog += 1
        return True

    async def fail(self, lease: Lease, reason: str) -> None:
        """The task failed for good (not retryable): FAILED with ``reason``."""
        await self.frontier.nack(lease.taskid, self._clock.time(), None, reason, self._owner)

    async def bad(self, lease: Lease, reason: str) -> None:
        """The task can never succeed (forbidden, unparseable): BAD with ``reason``."""
        await self.frontier.mark_bad(lease.taskid, self._clock.time(), reason, self._owner)

    # -- idleness and housekeeping --------------------------------------------------------
    async def is_finished(self) -> bool:
        """Nothing queued, delayed, parked or processing."""
        if self._buffer or self._parked:
            return False
        counts = await self.frontier.counts(self._clock.time())
        return counts.ready == 0 and counts.delayed == 0 and counts.processing == 0

    async def next_wakeup(self) -> float | None:
        """Seconds until a task may become dispatchable without anything else happening
        (a delayed task comes due, a slot's delay ends), or None if only an event can."""
        waits: list[float] = []
        due = await self.frontier.next_due()
        if due is not None:
            waits.append(max(0.0, due - self._clock.time()))
        now = self._clock.monotonic()
        for key in self._parked:
            wait = self.slots.get(key).wait_time(now)
            if wait is not None:
                waits.append(wait)
        return min(waits) if waits else None

    async def maintain(self) -> None:
        """Periodic upkeep: reclaim expired leases, renew the ones held here, drop idle
        slots. Cheap; the engine calls it about once a second."""
        now = self._clock.time()
        held = [lease.taskid for lease in self._buffer]
        held.extend(lease.taskid for queue in self._parked.values() for lease in queue)
        if held:
            await self.frontier.renew(held, now, self._lease_seconds, self._owner)
        reclaimed = await self.frontier.reclaim_expired(now)
        if reclaimed:
            self._stats.inc("scheduler/leases_reclaimed", reclaimed)
            log.warning("Re-queued %d tasks whose lease expired", reclaimed)
        self.slots.sweep(self._clock.monotonic(), self._parked)

    def release_held(self) -> list[Lease]:
        """Hand back every lease held locally but not started (for a clean shutdown)."""
        held = list(self._buffer)
        held.extend(lease for queue in self._parked.values() for lease in queue)
        self._buffer.clear()
        self._parked.clear()
        self._parked_count = 0
        return held
