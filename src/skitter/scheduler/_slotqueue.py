"""Per-slot queues: which leased task starts downloading next, and when.

Scrapy's DownloaderAwarePriorityQueue, taken further. Tasks wait in one queue per
download slot (host); within a slot the highest priority goes first, FIFO within a
priority. The next download comes from the slot with the **fewest downloads in flight**
among those allowed to start now, ties broken by the slots' best priority and then by
arrival, so one slow host never holds up the others (no head-of-line blocking).

A slot may start a download when all of these hold (each from its ``SlotPolicy``):

- fewer than ``concurrency`` downloads are in flight (one, while ``await_rules`` waits
  for the host's robots.txt);
- the delay since the previous start has passed: ``delay`` (or AutoThrottle's), times
  0.5-1.5 when randomized, and never less than robots.txt's ``Crawl-delay``;
- no back-off is running (429/503 or Retry-After, for the whole slot);
- its token bucket, if any, holds a token; its circuit breaker, if any, allows it.

Cost does not grow with the number of slots. Slots that may start are kept in a heap
keyed ``(in_flight, -best priority, arrival of the best task)``; slots waiting for a
time (delay, back-off, bucket, breaker) sit in a timer heap; slots that can only be
freed by a finishing download are in neither. Every change to a slot bumps its
version and pushes a fresh entry; older entries are skipped when they surface, and
a heap is rebuilt when stale entries outnumber live ones.

A slot with nothing queued and nothing in flight is dropped as soon as its delay and
back-off have passed (a third heap times that), so a crawl over a million hosts keeps
no million idle records. What a dropped slot knew is forgotten: AutoThrottle's delay,
the breaker's failure count, the done/failed counters. ``keep_idle`` keeps idle slots
that many seconds longer (Scrapy keeps them 60 s) so that this survives short gaps.
Robots.txt crawl-delays are kept apart, since a host's robots.txt is read once.

Back-off: a ``Retry-After`` (in seconds, already parsed) pauses the slot that long, at
most ``retry_after_max``. A 429 or 503 without one pauses it ``backoff_base`` seconds,
doubling with each back-off in a row up to ``backoff_max``; any other response resets
the doubling. Results of downloads that were in flight when a back-off began do not
double it again: they are answers to the same overload.

Time is passed in (``now``, monotonic seconds) rather than read, and the token buckets
and breakers read that same time, so the whole core runs on a fake clock in tests.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Collection
from dataclasses import dataclass
from heapq import heapify, heappop, heappush
from typing import Any, Generic, TypeVar

from skitter.extensions.wiring import AutoThrottle
from skitter.scheduler._breaker import BreakerState
from skitter.scheduler._slots import SlotPolicies, SlotState

__all__ = ["SlotQueues", "SlotStats"]

log = logging.getLogger("skitter.throttle")

T = TypeVar("T")

_IDLE, _READY, _WAITING, _EXPIRING = range(4)  # SlotState.where: which heap has its entry


@dataclass(frozen=True, slots=True)
class SlotStats:
    """One live slot, for the stats output and the web UI."""

    key: str
    in_flight: int
    queued: int
    done: int  # downloads finished with ok=True since the slot was created
    failed: int
    concurrency: int
    delay: float  # the delay now in force (configured, throttled or crawl-delay), unrandomized
    breaker: BreakerState | None  # None when the slot has no breaker
    backoff_until: float | None  # monotonic time the back-off ends; None if none is running


class _Now:
    """The clock the slots' buckets and breakers read: the ``now`` of the current call."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = -math.inf

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now


class SlotQueues(Generic[T]):
    """Leased tasks queued per download slot, handed out least-busy slot first.

    Items are opaque (leases, requests...). ``pop`` counts a download as started; every
    popped item must be reported back with ``finished``. Not thread-safe.
    """

    def __init__(
        self,
        policies: SlotPolicies | None = None,
        *,
        throttle: AutoThrottle | None = None,
        backoff_statuses: Collection[int] = (429, 503),
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        retry_after_max: float = 3600.0,
        keep_idle: float = 0.0,
        seed: int | None = None,
        await_rules: bool = False,
        shared_throttle: bool = False,
    ) -> None:
        self.policies = policies if policies is not None else SlotPolicies()
        #: A cluster's worker keeps AutoThrottle's delay in Redis, one per slot for every
        #: worker (the gate applies it): pacing its starts by its own delay as well would
        #: hold a worker that joins late at the first delay, and one whose own delay is a
        #: hair above the shared one a whole step behind it. Then a throttled slot waits
        #: here only for its floor (its configured delay, Crawl-delay); the delay it
        #: learns from its own samples is still reported.
        self.shared_throttle = shared_throttle
        #: When robots.txt is obeyed, a slot whose rules are not known yet (no
        #: ``set_crawl_delay`` for it) allows one download at a time, so that a host's
        #: Crawl-delay holds from its first requests, not from the second wave.
        self.await_rules = await_rules
        self._rules_known: set[str] = set()
        self.throttle = throttle
        self.backoff_statuses = frozenset(backoff_statuses)
        self.backoff_base, self.backoff_max = backoff_base, backoff_max
        self.retry_after_max = retry_after_max
        self.keep_idle = keep_idle
        self._rng = random.Random(seed)
        self._clock = _Now()
        self._slots: dict[str, SlotState[T]] = {}
        self._crawl_delays: dict[str, float] = {}
        self._ready: list[tuple[int, int, int, int, str]] = []  # in_flight, -prio, seq, ver
        self._timers: list[tuple[float, int, str]] = []  # when, version, key
        self._expiry: list[tuple[float, int, str]] = []
        self._seq = self._version = self._queued = self._in_flight = 0

    # -- queueing -------------------------------------------------------------------------
    def push(self, slot_key: str, priority: int, item: T) -> None:
        """Queue ``item`` in ``slot_key``: after the slot's items of higher or equal
        priority, before those of lower priority."""
        slot = self._slots.get(slot_key)
        if slot is None:
            slot = self._slots[slot_key] = SlotState(
                slot_key, self.policies[slot_key], self._clock, self.throttle
            )
        self._seq += 1
        entry = (-priority, self._seq, item)
        heappush(slot.queue, entry)
        self._queued += 1
        # Only a new head changes the slot's rank; a slot waiting on time or on a
        # finishing download keeps waiting whatever its head is.
        if slot.queue[0] is entry and slot.where in (_READY, _IDLE, _EXPIRING):
            self._place(slot, self._clock.now)

    def pop(self, now: float) -> tuple[str, T] | None:
        """The next item to start downloading, with its slot, or None if no slot may
        start now. The download counts as started from here on."""
        now = self._advance(now)
        ready = self._ready
        while ready:
            _, _, _, version, key = heappop(ready)
            slot = self._slots.get(key)
            if slot is None or slot.version != version:
                continue
            slot.where = _IDLE
            if not self._admit(slot, now):
                self._place(slot, now)
                continue
            item = heappop(slot.queue)[2]
            self._queued -= 1
            self._start(slot, now)
            self._place(slot, now)
            return key, item
        return None

    def finished(
        self,
        slot_key: str,
        now: float,
        *,
        latency: float | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        ok: bool = True,
    ) -> None:
        """A download popped from ``slot_key`` ended, in any way.

        ``ok`` feeds the breaker and the done/failed counts; ``status`` (None when there
        was no response) and ``retry_after`` (seconds) may back the slot off;
        ``latency`` (seconds) feeds AutoThrottle.
        """
        now = self._advance(now)
        slot = self._slots.get(slot_key)
        if slot is None or slot.in_flight <= 0:
            raise ValueError(f"finished() for slot {slot_key!r}, which has no download in flight")
        slot.in_flight -= 1
        self._in_flight -= 1
        slot.last_end = now
        if ok:
            slot.done += 1
        else:
            slot.failed += 1
        if slot.breaker is not None:
            slot.probe_wait = -math.inf  # a result came back: probes may be due again
            if ok:
                slot.breaker.record_success()
            else:
                slot.breaker.record_failure()
        self._back_off(slot, now, status, retry_after)
        if latency is not None and self.throttle is not None and slot.policy.throttle:
            self._throttle(slot, self.throttle, latency, status)
        self._place(slot, now)

    def set_crawl_delay(
        self, slot_key: str, seconds: float | None, now: float | None = None
    ) -> None:
        """robots.txt's Crawl-delay for ``slot_key``: a floor under the slot's delay,
        never shortened by randomization. None forgets it. Kept while the slot is idle.
        Told at ``now`` while a download of the slot is in flight, the next start waits
        one Crawl-delay from then."""
        now = self._clock.now if now is None else self._advance(now)
        if seconds is None:
            self._crawl_delays.pop(slot_key, None)
        elif isinstance(seconds, bool) or not (seconds >= 0 and math.isfinite(seconds)):
            raise ValueError(f"crawl-delay for slot {slot_key!r} must be >= 0, got {seconds!r}")
        else:
            self._crawl_delays[slot_key] = float(seconds)
        slot = self._slots.get(slot_key)
        if slot is not None and seconds and slot.in_flight:
            # Told as a download that read robots.txt ends (before ``finished``), and its
            # request left only once robots.txt came in, after the slot counted it
            # started: the next start is one Crawl-delay from now, not at once.
            slot.next_start = max(slot.next_start, now + seconds)
        if self.await_rules and slot_key not in self._rules_known:
            self._rules_known.add(slot_key)
        if slot is not None:  # it may start more downloads now, or later than it would
            self._place(slot, now)

    # -- state for the shell, the stats and the UI --------------------------------------
    def rules_known(self, slot_key: str) -> bool | None:
        """Whether robots.txt of ``slot_key`` was read (None: rules are not awaited)."""
        return slot_key in self._rules_known if self.await_rules else None

    def crawl_delay(self, slot_key: str) -> float:
        """robots.txt's Crawl-delay for ``slot_key`` (0.0: none known)."""
        return self._crawl_delays.get(slot_key, 0.0)

    def wait_time(self, now: float) -> float | None:
        """Seconds until some slot may start a download: 0 if one may now, None if only
        a finishing download (or a new item) can make one ready."""
        now = self._advance(now)
        slots = self._slots
        ready, timers = self._ready, self._timers
        while ready and not _live(slots, ready[0][4], ready[0][3]):
            heappop(ready)
        if ready:
            return 0.0
        while timers and not _live(slots, timers[0][2], timers[0][1]):
            heappop(timers)
        if timers:
            return max(0.0, timers[0][0] - now)
        return None

    def __len__(self) -> int:
        """Items queued (not started)."""
        return self._queued

    @property
    def in_flight(self) -> int:
        """Downloads popped and not finished yet, over all slots."""
        return self._in_flight

    @property
    def slot_count(self) -> int:
        """Slots held in memory (queued, in flight, or still inside a delay)."""
        return len(self._slots)

    def stats(self, slot_key: str | None = None) -> dict[str, SlotStats]:
        """Stats of ``slot_key`` (an empty dict if it is not live), or of every slot."""
        if slot_key is not None:
            slot = self._slots.get(slot_key)
            return {} if slot is None else {slot_key: self._stats(slot)}
        return {key: self._stats(slot) for key, slot in self._slots.items()}

    def drain(self) -> list[T]:
        """Remove and return every queued item (for a shutdown), each slot's in order.
        Downloads in flight stay counted until they are ``finished``."""
        items: list[T] = []
        now = self._clock.now
        for slot in list(self._slots.values()):
            queue = slot.queue
            items.extend(entry[2] for entry in sorted(queue))
            queue.clear()
            self._place(slot, now)
        self._queued = 0
        return items

    # -- internals ----------------------------------------------------------------------
    def _advance(self, now: float) -> float:
        """Move to ``now``: wake slots whose wait is over, drop idle slots that expired."""
        clock = self._clock
        now = clock.now = max(now, clock.now)  # a clock never goes back
        slots, timers, expiry = self._slots, self._timers, self._expiry
        while timers and timers[0][0] <= now:
            _, version, key = heappop(timers)
            slot = slots.get(key)
            if slot is not None and slot.version == version:
                self._place(slot, now)
        while expiry and expiry[0][0] <= now:
            _, version, key = heappop(expiry)
            slot = slots.get(key)
            if slot is not None and slot.version == version:
                del slots[key]
        return now

    def _ready_at(self, slot: SlotState[T], now: float) -> float:
        """When ``slot`` may start a download, as far as time goes (inf: not by time)."""
        at = max(slot.next_start, slot.backoff_until, slot.probe_wait)
        breaker = slot.breaker
        if breaker is not None and breaker.state is BreakerState.OPEN:
            at = max(at, breaker.reopens_at or now)
        if slot.bucket is not None and at <= now:
            at = now + slot.bucket.wait_time()
        return at

    def _admit(self, slot: SlotState[T], now: float) -> bool:
        """Take the slot's token and breaker probe for one download, if both allow it."""
        if self._ready_at(slot, now) > now:
            return False
        breaker = slot.breaker
        if breaker is not None and not breaker.allow():
            # Half-open with every probe out: wait for their results (``finished``),
            # or for a new round of probes after another pause if they never come.
            slot.probe_wait = now + breaker.pause
            return False
        return slot.bucket is None or slot.bucket.try_take()

    def _start(self, slot: SlotState[T], now: float) -> None:
        slot.in_flight += 1
        self._in_flight += 1
        delay = slot.delay
        if self.shared_throttle and self.throttle is not None and slot.policy.throttle:
            delay = slot.policy.delay  # the gate applies the shared delay above it
        elif delay > 0 and slot.policy.randomize_delay:
            delay *= self._rng.uniform(0.5, 1.5)
        delay = max(delay, self._crawl_delays.get(slot.key, 0.0))
        if delay > 0:
            slot.next_start = now + delay

    def _place(self, slot: SlotState[T], now: float) -> None:
        """File ``slot`` under the heap that matches its state now."""
        # Versions are unique over all slots, so an entry left by a dropped slot can
        # never pass for one of a new slot with the same key.
        self._version += 1
        key, version = slot.key, self._version
        slot.version = version
        if not slot.queue:
            if slot.in_flight:
                slot.where = _IDLE
                return
            until = max(slot.next_start, slot.backoff_until, slot.last_end + self.keep_idle)
            if slot.breaker is not None and slot.breaker.state is BreakerState.OPEN:
                until = max(until, slot.breaker.reopens_at or now)
            if until <= now:
                del self._slots[key]
            else:
                slot.where = _EXPIRING
                self._push(self._expiry, (until, version, key))
            return
        if slot.in_flight >= self._concurrency(slot):
            slot.where = _IDLE  # only a finishing download frees it
            return
        at = self._ready_at(slot, now)
        if at <= now:
            slot.where = _READY
            neg_priority, seq, _ = slot.queue[0]
            self._push(self._ready, (slot.in_flight, neg_priority, seq, version, key))
        elif at < math.inf:
            slot.where = _WAITING
            self._push(self._timers, (at, version, key))
        else:
            slot.where = _IDLE  # a bucket with rate 0: nothing will ever start

    def _concurrency(self, slot: SlotState[T]) -> int:
        if self.await_rules and slot.key not in self._rules_known:
            return 1
        return slot.policy.concurrency

    def _push(self, heap: list[Any], entry: tuple[Any, ...]) -> None:
        heappush(heap, entry)
        if len(heap) > 2 * len(self._slots) + 64:
            # Stale entries outnumber live ones: rebuild, amortized O(1) per push.
            slots = self._slots
            heap[:] = [e for e in heap if _live(slots, e[-1], e[-2])]
            heapify(heap)

    def _back_off(
        self, slot: SlotState[T], now: float, status: int | None, retry_after: float | None
    ) -> None:
        if retry_after is not None and retry_after >= 0:
            wait = min(retry_after, self.retry_after_max)
        elif status in self.backoff_statuses:
            if now < slot.backoff_until:
                return  # an answer to a download sent before this back-off began
            wait = min(self.backoff_max, self.backoff_base * 2.0**slot.backoff_level)
            slot.backoff_level += 1
        else:
            if status is not None:
                slot.backoff_level = 0
            return
        slot.backoff_until = max(slot.backoff_until, now + wait)

    def _throttle(
        self, slot: SlotState[T], throttle: AutoThrottle, latency: float, status: int | None
    ) -> None:
        old = slot.delay
        slot.delay = throttle.next_delay(old, latency, status, min_delay=slot.policy.delay)
        if throttle.debug:
            log.info(
                "slot: %s | conc:%2d | delay:%5d ms (%+d) | latency:%5d ms | status: %s",
                slot.key, slot.in_flight, slot.delay * 1000, (slot.delay - old) * 1000,
                latency * 1000, status,
            )  # fmt: skip

    def _stats(self, slot: SlotState[T]) -> SlotStats:
        now = self._clock.now
        return SlotStats(
            key=slot.key,
            in_flight=slot.in_flight,
            queued=len(slot.queue),
            done=slot.done,
            failed=slot.failed,
            concurrency=self._concurrency(slot),
            delay=max(slot.delay, self._crawl_delays.get(slot.key, 0.0)),
            breaker=None if slot.breaker is None else slot.breaker.state,
            backoff_until=slot.backoff_until if slot.backoff_until > now else None,
        )


def _live(slots: dict[str, SlotState[Any]], key: str, version: int) -> bool:
    slot = slots.get(key)
    return slot is not None and slot.version == version
