"""The in-memory frontier: pyspider's task queue as a synchronous core (SPEC §2).

``MemoryTaskQueue`` holds all the logic and never reads a clock or awaits: every method
takes ``now``, so tests drive it with plain numbers and a hypothesis state machine checks
it step by step against a naive model. ``MemoryFrontier`` is the thin async shell that
makes it a ``Frontier``.

This is the hot path of every crawl (some fifteen pushes, one lease and one ack per
page), so the layout is chosen for speed and memory:

- A task that is queued or processing is one small list, a *record*::

      [key, request, retried, where, when, owner, lease]

  ``key = seq - (priority << 48)`` is the task's place in the ready order: higher
  priority first, then ``seq``, the global sequence number given at first push (strict
  FIFO). ``where`` says which heap holds the record; ``when`` is the exetime while
  delayed and the lease deadline while processing; ``lease`` is the ``Lease`` handed
  out for the current attempt (None while queued): an ack, nack or renewal must
  present that very object, so a stale attempt cannot settle a newer one.
- The ready heap holds bare keys, with a dict from key to record beside it: ints
  compare in C without a detour through lists or tuples, which halves the cost of a
  pop on a large heap. A merge that raises a priority pushes the new key and drops the
  old one from the dict; a popped key missing from the dict is skipped.
- The delayed and processing heaps hold ``(time, tick, record)`` tuples (the unique
  ``tick`` keeps ties from comparing records). A record that must leave one of them
  other than by being popped (an ack, a renewal, an earlier exetime) is *killed* -- its
  request set to None -- and a copy takes its place; dead entries are skipped when they
  surface. So a record sits in at most one heap, and is live while its request is set.
- Dead heap entries are swept out once they outnumber the live ones, so the heaps
  stay proportional to the tasks whatever the churn of merges and renewals.
- Tasks are keyed by the request's 20-byte fingerprint, already computed and cached on
  the request, rather than by a 40-character hex string; an explicit taskid is its own
  key (a lower-case hex one is keyed by its bytes, so both spellings meet).
- A finished task is remembered for dedupe and recrawl as a bare float, its
  lastcrawltime, in the common case (a success at the first attempt, without itag), and
  as a small ``_Finished`` tuple otherwise. Its URL is kept only when it failed, so
  ``task()`` of a succeeded task reports an empty URL.

A task pushed again while it is processing is IGNORED: its running attempt stands for
it, and changing a task under a worker's feet is how tasks get lost.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from typing import Any, NamedTuple

from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.http import Request, in_domain

__all__ = ["MemoryFrontier", "MemoryTaskQueue", "check_request", "task_key"]

_SEQ_BITS = 48  # 2.8e14 pushes before FIFO order within a priority could break
_SEQ_MASK = (1 << _SEQ_BITS) - 1

# Fields of a record.
_KEY = 0
_REQ = 1
_RETRIED = 2
_WHERE = 3
_WHEN = 4
_OWNER = 5
_LEASE = 6
# Values of record[_WHERE].
_READY = 0
_DELAYED = 1
_PROCESSING = 2

_SWEEP_MIN = 1024  # dead heap entries tolerated before a heap may be swept

_NEW = PushOutcome.NEW
_MERGED = PushOutcome.MERGED
_RECRAWL = PushOutcome.RECRAWL
_IGNORED = PushOutcome.IGNORED

Record = list[Any]
TaskKey = bytes | str
Timed = tuple[float, int, Record]


class _Finished(NamedTuple):
    """A finished task that is not a plain first-attempt success."""

    state: TaskState
    lastcrawltime: float
    itag: str | None
    retried: int
    reason: str
    url: str


def task_key(taskid: str) -> TaskKey:
    """The dictionary key of ``taskid``: the 20 bytes of a lower-case SHA-1 hex, else
    the string itself."""
    if len(taskid) == 40:
        try:
            raw = bytes.fromhex(taskid)
        except ValueError:
            return taskid
        if raw.hex() == taskid:
            return raw
    return taskid


def _request_key(request: Request) -> TaskKey:
    if request.has_explicit_taskid:
        return task_key(request.taskid)
    return request.fingerprint


def _priority(request: Request) -> int:
    priority = request.priority
    if isinstance(priority, int):
        return int(priority)
    if isinstance(priority, float) and priority.is_integer():
        return int(priority)
    raise TypeError(f"priority of {request!r} must be an int, got {priority!r}")


def check_request(request: Request) -> None:
    """Raise, naming the request, if it cannot be queued: InvalidURL when its URL cannot
    be fingerprinted, TypeError for a priority, exetime or age that is not a number.

    Batch pushes call it for every request first, so a bad one changes nothing.
    """
    _request_key(request)
    if request.priority.__class__ is not int:
        _priority(request)
    for name, value in (("exetime", request.exetime), ("age", request.age)):
        cls = value.__class__
        usual = cls is float or cls is int  # decided cheaply; bools and others checked
        if not usual and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise TypeError(f"{name} of {request!r} must be a number, got {value!r}")


def _taskid_of(tk: TaskKey) -> str:
    return tk.hex() if isinstance(tk, bytes) else tk


def _recrawl_due(done: float | _Finished, request: Request, now: float) -> bool:
    """pyspider's rule: the *incoming* request's itag and age decide."""
    if isinstance(done, _Finished):
        lastcrawltime, itag = done.lastcrawltime, done.itag
    else:
        lastcrawltime, itag = done, None
    if request.itag is not None and request.itag != itag:
        return True
    age = request.age
    return age >= 0 and lastcrawltime + age <= now


class MemoryTaskQueue:
    """One project's tasks: ready heap, delayed heap, processing leases, finished states.

    Synchronous and clock-free; every method takes ``now`` (epoch seconds). The methods
    mirror ``Frontier``'s, one request at a time for ``push``.
    """

    __slots__ = (
        "_active",
        "_dead_delayed",
        "_dead_processing",
        "_delayed",
        "_errors",
        "_finished",
        "_kept",
        "_n_delayed",
        "_n_processing",
        "_processing",
        "_ready",
        "_ready_index",
        "_seq",
        "_tick",
    )

    def __init__(self) -> None:
        self._active: dict[TaskKey, Record] = {}  # queued or processing
        self._finished: dict[TaskKey, float | _Finished] = {}  # last outcome, kept on recrawl
        self._errors: dict[TaskKey, str] = {}  # last failure of tasks queued for a retry
        self._kept: dict[TaskKey, Request] = {}  # FAILED and BAD tasks, to queue again
        self._ready: list[int] = []  # heap of keys
        self._ready_index: dict[int, Record] = {}  # key -> record, for keys still live
        self._delayed: list[Timed] = []
        self._processing: list[Timed] = []
        self._n_delayed = 0
        self._n_processing = 0
        self._dead_delayed = 0
        self._dead_processing = 0
        self._seq = itertools.count()
        self._tick = itertools.count()

    def __len__(self) -> int:
        """Tasks queued or processing."""
        return len(self._active)

    # -- queueing -------------------------------------------------------------------------
    def push(self, request: Request, now: float, force: bool = False) -> PushOutcome:
        """Queue ``request`` at ``max(request.exetime, now)``; see ``Frontier.push``."""
        tk = request.taskid if request.has_explicit_taskid else request.fingerprint
        if tk.__class__ is str:
            tk = task_key(tk)
        rec = self._active.get(tk)
        if rec is not None:
            return self._merge(rec, tk, request, now)
        outcome = _NEW
        if self._finished:
            done = self._finished.get(tk)
            if done is not None:
                if not force and not _recrawl_due(done, request, now):
                    return _IGNORED
                outcome = _RECRAWL
        priority = request.priority
        if priority.__class__ is not int:
            priority = _priority(request)
        exetime = request.exetime
        key = next(self._seq) - (priority << _SEQ_BITS)
        if exetime > now:
            rec = [key, request, 0, _DELAYED, exetime, "", None]
            heappush(self._delayed, (exetime, next(self._tick), rec))
            self._n_delayed += 1
        else:
            rec = [key, request, 0, _READY, 0.0, "", None]
            self._ready_index[key] = rec
            heappush(self._ready, key)
        self._active[tk] = rec
        return outcome

    def _merge(self, rec: Record, tk: TaskKey, request: Request, now: float) -> PushOutcome:
        """One entry per taskid: the higher priority and the earlier exetime win (but a
        retry's time is kept)."""
        where = rec[_WHERE]
        if where == _PROCESSING:
            return _IGNORED
        key = rec[_KEY]
        priority = _priority(request)
        new_key = (key & _SEQ_MASK) - (priority << _SEQ_BITS)
        higher = new_key < key
        if higher:
            # The kept request carries the merged priority, so later stages (download
            # slots) order it as the frontier did.
            rec[_REQ].priority = priority
        if where == _READY:
            if higher:
                # The old key stays in the heap, dead: it is no longer in the index.
                del self._ready_index[key]
                rec[_KEY] = new_key
                self._ready_index[new_key] = rec
                heappush(self._ready, new_key)
                self._sweep_ready()
            return _MERGED
        if higher:
            rec[_KEY] = new_key  # its delayed entry is ordered by exetime, not by key
        # A task waiting for a retry keeps its back-off: a link to it found again on
        # another page must not make a failing page due at once.
        if request.exetime < rec[_WHEN] and not rec[_RETRIED]:
            rec = self._replace(tk, rec)
            self._dead_delayed += 1
            if request.exetime <= now:
                self._n_delayed -= 1
                self._make_ready(rec)
            else:
                rec[_WHEN] = request.exetime
                heappush(self._delayed, (request.exetime, next(self._tick), rec))
            self._sweep_delayed()
        return _MERGED

    def _make_ready(self, rec: Record) -> None:
        key = rec[_KEY]
        rec[_WHERE] = _READY
        rec[_OWNER] = ""
        rec[_LEASE] = None
        self._ready_index[key] = rec
        heappush(self._ready, key)

    def _replace(self, tk: TaskKey, rec: Record) -> Record:
        """Kill ``rec`` where it lies (a delayed or processing entry) and return a live
        copy in its place."""
        new = rec.copy()
        rec[_REQ] = None
        self._active[tk] = new
        return new

    def _promote(self, now: float) -> None:
        """Move delayed tasks that are due to the ready heap."""
        delayed = self._delayed
        while delayed and delayed[0][0] <= now:
            rec = heappop(delayed)[2]
            if rec[_REQ] is None:
                self._dead_delayed -= 1
                continue
            self._n_delayed -= 1
            self._make_ready(rec)

    # -- leases ---------------------------------------------------------------------------
    def lease(self, limit: int, now: float, lease_seconds: float, owner: str = "") -> list[Lease]:
        """Up to ``limit`` due tasks, best first, each processing until
        ``now + lease_seconds``."""
        if self._delayed and self._delayed[0][0] <= now:
            self._promote(now)
        ready = self._ready
        index = self._ready_index
        processing = self._processing
        deadline = now + lease_seconds
        leases: list[Lease] = []
        while ready and len(leases) < limit:
            rec = index.pop(heappop(ready), None)
            if rec is None:
                continue  # a key that a merge replaced
            request = rec[_REQ]
            lease = Lease(request.taskid, request, rec[_RETRIED], deadline)
            rec[_WHERE] = _PROCESSING
            rec[_WHEN] = deadline
            rec[_OWNER] = owner
            rec[_LEASE] = lease
            heappush(processing, (deadline, next(self._tick), rec))
            leases.append(lease)
        self._n_processing += len(leases)
        return leases

    def _current(self, lease: Lease) -> tuple[TaskKey, Record] | None:
        """The record of the task ``lease`` is the current attempt of, or None."""
        tk = task_key(lease.taskid)
        rec = self._active.get(tk)
        if rec is None or rec[_LEASE] is not lease:
            return None
        return tk, rec

    def _release(self, tk: TaskKey, rec: Record) -> None:
        """End the lease of ``rec``: its processing entry dies in place."""
        rec[_REQ] = None
        self._n_processing -= 1
        self._dead_processing += 1
        if self._dead_processing > _SWEEP_MIN:
            self._sweep_processing()

    def _finish(self, tk: TaskKey, rec: Record, outcome: float | _Finished) -> None:
        self._release(tk, rec)
        del self._active[tk]
        self._finished[tk] = outcome
        if self._errors:
            self._errors.pop(tk, None)

    def ack(self, lease: Lease, now: float) -> bool:
        """SUCCESS at ``now``; an ``auto_recrawl`` task is queued again at ``now + age``."""
        found = self._current(lease)
        if found is None:
            return False
        tk, rec = found
        request = rec[_REQ]
        retried = rec[_RETRIED]
        itag = request.itag
        if retried or itag is not None:
            self._finish(tk, rec, _Finished(TaskState.SUCCESS, now, itag, retried, "", ""))
        else:
            self._finish(tk, rec, now)
        if request.auto_recrawl and request.age >= 0:
            request.exetime = now + request.age
            self.push(request, now, force=True)
        return True

    def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        """The attempt failed: queue it again at ``retry_at`` with ``retried + 1``, or
        FAILED with ``reason`` when ``retry_at`` is None."""
        found = self._current(lease)
        if found is None:
            return False
        tk, rec = found
        if retry_at is None:
            self._fail(tk, rec, TaskState.FAILED, now, reason)
            return True
        new = rec.copy()
        self._active[tk] = new
        self._release(tk, rec)
        new[_RETRIED] += 1
        self._errors[tk] = reason
        if retry_at > now:
            new[_WHERE] = _DELAYED
            new[_WHEN] = retry_at
            new[_OWNER] = ""
            new[_LEASE] = None
            heappush(self._delayed, (retry_at, next(self._tick), new))
            self._n_delayed += 1
        else:
            self._make_ready(new)
        return True

    def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        """BAD with ``reason``: the task can never succeed and is not retried (its request
        is kept, for ``requeue_bad``)."""
        found = self._current(lease)
        if found is None:
            return False
        self._fail(*found, TaskState.BAD, now, reason)
        return True

    def _fail(self, tk: TaskKey, rec: Record, state: TaskState, now: float, reason: str) -> None:
        request = rec[_REQ]
        outcome = _Finished(state, now, request.itag, rec[_RETRIED], reason, request.url)
        self._finish(tk, rec, outcome)
        self._kept.pop(tk, None)  # kept in the order they failed: requeued in that order
        self._kept[tk] = request  # so that a person can queue it again

    def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        """Finished tasks in ``state``, most recent first (SUCCESS tasks without a URL
        kept are listed with an empty URL)."""
        found = []
        active = self._active
        for tk, done in self._finished.items():
            if tk in active:  # queued again: its last outcome is history
                continue
            if isinstance(done, _Finished):
                if done.state is state:
                    found.append((done.lastcrawltime, _taskid_of(tk), done))
            elif state is TaskState.SUCCESS:
                found.append((done, _taskid_of(tk), None))
        found.sort(key=lambda entry: entry[0], reverse=True)
        out = []
        for when, taskid, done in found[:limit]:
            if done is None:
                out.append(TaskInfo(taskid, "", TaskState.SUCCESS, 0, float(when), ""))
            else:
                out.append(
                    TaskInfo(taskid, done.url, done.state, done.retried, float(when), done.reason)
                )
        return out

    def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue FAILED tasks again with ``retried`` reset, optionally only those whose
        host is ``domain`` (or a subdomain) or whose reason contains ``reason``."""
        return self._requeue(TaskState.FAILED, now, domain, reason)

    def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue BAD tasks again, filtered as ``retry_failed``."""
        return self._requeue(TaskState.BAD, now, domain, reason)

    def _requeue(self, state: TaskState, now: float, domain: str | None, reason: str | None) -> int:
        count = 0
        for tk, request in list(self._kept.items()):
            done = self._finished.get(tk)
            if (
                tk in self._active
                or not isinstance(done, _Finished)
                or done.state not in (TaskState.FAILED, TaskState.BAD)
            ):
                del self._kept[tk]  # queued again, or succeeded since
                continue
            if done.state is not state:
                continue
            if domain is not None and not in_domain(request.url, domain):
                continue
            if reason is not None and reason not in done.reason:
                continue
            del self._kept[tk]
            request.exetime = 0.0
            if self.push(request, now, force=True) is not _IGNORED:
                count += 1
        return count

    def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        """Move the deadlines of current leases to ``now + lease_seconds``."""
        deadline = now + lease_seconds
        renewed = 0
        for lease in leases:
            found = self._current(lease)
            if found is None:
                continue
            lease.deadline = deadline
            tk, rec = found
            new = rec.copy()
            self._active[tk] = new
            self._release(tk, rec)
            new[_WHEN] = deadline
            heappush(self._processing, (deadline, next(self._tick), new))
            self._n_processing += 1
            renewed += 1
        return renewed

    def reclaim_expired(self, now: float) -> int:
        """Put tasks whose lease deadline is ``<= now`` back in the ready heap, at their
        old place in the order (``retried`` is unchanged: the attempt did not fail)."""
        processing = self._processing
        reclaimed = 0
        while processing and processing[0][0] <= now:
            rec = heappop(processing)[2]
            if rec[_REQ] is None:
                self._dead_processing -= 1
                continue
            self._make_ready(rec)
            reclaimed += 1
        self._n_processing -= reclaimed
        return reclaimed

    # -- upkeep: dead heap entries are rebuilt away once they outnumber the live ones, so
    # -- each sweep's O(n) is paid for by n kills before it: O(1) per kill over time.
    def _sweep_ready(self) -> None:
        dead = len(self._ready) - len(self._ready_index)
        if dead > _SWEEP_MIN and dead > len(self._ready_index):
            self._ready = list(self._ready_index)
            heapify(self._ready)

    def _sweep_delayed(self) -> None:
        if self._dead_delayed > _SWEEP_MIN and self._dead_delayed * 2 > len(self._delayed):
            self._delayed = [entry for entry in self._delayed if entry[2][_REQ] is not None]
            heapify(self._delayed)
            self._dead_delayed = 0

    def _sweep_processing(self) -> None:
        if self._dead_processing * 2 > len(self._processing):
            self._processing = [entry for entry in self._processing if entry[2][_REQ] is not None]
            heapify(self._processing)
            self._dead_processing = 0

    # -- queries --------------------------------------------------------------------------
    def counts(self, now: float) -> FrontierCounts:
        """Tasks ready (due), delayed (not yet due) and processing."""
        # Promoting early changes no order: the ready heap orders by (priority, seq) alone.
        self._promote(now)
        delayed = self._n_delayed
        processing = self._n_processing
        return FrontierCounts(len(self._active) - delayed - processing, delayed, processing)

    def next_due(self) -> float | None:
        """The earliest exetime among delayed tasks, or None."""
        delayed = self._delayed
        while delayed and delayed[0][2][_REQ] is None:
            heappop(delayed)
            self._dead_delayed -= 1
        return delayed[0][0] if delayed else None

    def task(self, taskid: str) -> TaskInfo | None:
        """What is known of ``taskid``: ACTIVE while queued or processing."""
        tk = task_key(taskid)
        done = self._finished.get(tk)
        rec = self._active.get(tk)
        if rec is not None:
            if done is None:
                last = 0.0
            else:
                last = done.lastcrawltime if isinstance(done, _Finished) else done
            reason = self._errors.get(tk, "")
            url = rec[_REQ].url
            return TaskInfo(taskid, url, TaskState.ACTIVE, rec[_RETRIED], float(last), reason)
        if done is None:
            return None
        if isinstance(done, _Finished):
            return TaskInfo(
                taskid, done.url, done.state, done.retried, float(done.lastcrawltime), done.reason
            )
        return TaskInfo(taskid, "", TaskState.SUCCESS, 0, float(done), "")


class MemoryFrontier(Frontier):
    """A ``Frontier`` in this process's memory: fast, and gone when the process ends."""

    def __init__(self, queue: MemoryTaskQueue | None = None) -> None:
        self.queue = queue if queue is not None else MemoryTaskQueue()

    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        for request in requests:
            check_request(request)  # all or nothing: a bad request changes nothing
        push = self.queue.push
        if force is None:
            return [push(request, now) for request in requests]
        return [push(request, now, f) for request, f in zip(requests, force, strict=True)]

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        return self.queue.lease(limit, now, lease_seconds, owner)

    async def ack(self, lease: Lease, now: float) -> bool:
        return self.queue.ack(lease, now)

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        return self.queue.nack(lease, now, retry_at, reason)

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        return self.queue.mark_bad(lease, now, reason)

    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        return self.queue.tasks(state, limit)

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return self.queue.retry_failed(now, domain=domain, reason=reason)

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return self.queue.requeue_bad(now, domain=domain, reason=reason)

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        return self.queue.renew(leases, now, lease_seconds)

    async def reclaim_expired(self, now: float) -> int:
        return self.queue.reclaim_expired(now)

    async def counts(self, now: float) -> FrontierCounts:
        return self.queue.counts(now)

    async def next_due(self) -> float | None:
        return self.queue.next_due()

    async def task(self, taskid: str) -> TaskInfo | None:
        return self.queue.task(taskid)
