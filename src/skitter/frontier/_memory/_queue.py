"""The in-memory task queue: pyspider's task queue as a synchronous core.

``MemoryTaskQueue`` never reads a clock or awaits: every method takes ``now``, so tests
drive it with plain numbers and a hypothesis state machine checks it against a naive
model. ``MemoryFrontier`` is its async shell; ``SqliteFrontier`` persists it through its
public surface (the package docstring). This is the hot path of every crawl (some
fifteen pushes, one lease and one ack per page), so the layout is chosen for speed and
memory:

- A task queued or processing is a small list, a *record* (``_records.py``), holding
  its place in the ready order and the ``Lease`` of its current attempt: an ack, nack
  or renewal must present that very object (a stale attempt cannot settle a newer one).
  A ready task never leased is one bytes object instead, when its request allows
  (``skitter.http._compact``): a third of the memory. Leasing or viewing it makes an
  equal request again, not the object pushed.
- Due tasks wait in a ``ReadyHeap``, delayed and processing ones in ``TimedHeap``s (by
  exetime, by lease deadline); all delete lazily and sweep their dead entries once they
  outnumber the live ones, so the heaps stay proportional to the tasks.
- Tasks are keyed by the request's cached 20-byte fingerprint (``TaskKey``); finished
  ones are remembered compactly (``_finished.py``).

A task pushed again while it is processing is IGNORED: its running attempt stands for
it, and changing a task under a worker's feet is how tasks get lost.
"""

from __future__ import annotations

from collections.abc import Callable, KeysView, Sequence
from heapq import heappush
from typing import TypeVar

from skitter._secrets import mask_page_url
from skitter.frontier._base import FrontierCounts, Lease, PushOutcome, TaskInfo, TaskState
from skitter.frontier._memory._finished import (
    Done,
    Finished,
    FinishedTasks,
    lastcrawltime_of,
    recrawl_due,
)
from skitter.frontier._memory._ready import ReadyHeap
from skitter.frontier._memory._records import (
    DELAYED,
    KEY,
    LEASE,
    OWNER,
    PRIORITY_BARS,
    PROCESSING,
    READY,
    REQ,
    RETRIED,
    SEQ_BITS,
    SEQ_MASK,
    WHEN,
    WHERE,
    Record,
    TimedHeap,
    key_of,
    view_of,
)
from skitter.frontier._memory._task import (
    MAX_PRIORITY,
    TaskKey,
    TaskView,
    priority_of,
    request_key,
    task_key,
    taskid_of,
)
from skitter.http import Request

__all__ = ["MemoryTaskQueue"]

T = TypeVar("T")

_bar = PRIORITY_BARS.get
_NEW = PushOutcome.NEW
_MERGED = PushOutcome.MERGED
_RECRAWL = PushOutcome.RECRAWL
_IGNORED = PushOutcome.IGNORED
_ACTIVE = TaskState.ACTIVE


class MemoryTaskQueue:
    """One project's tasks: ready heap, delayed heap, processing leases, finished states.

    Synchronous and clock-free; every method takes ``now`` (epoch seconds). The methods
    mirror ``Frontier``'s, one request at a time for ``push``; the package docstring says
    what a persistence adapter may observe, view and restore.
    """

    __slots__ = (
        "_active",
        "_delayed",
        "_done",
        "_errors",
        "_finished",
        "_next_seq",
        "_processing",
        "_ready",
        "on_change",
    )

    def __init__(self, *, pack: bool = True) -> None:
        # Queued or processing: a record, or a ready task's packed entry (bytes).
        self._active: dict[TaskKey, Record | bytes] = {}
        self._ready = ReadyHeap(self._active, pack=pack)
        self._done = FinishedTasks()
        self._finished: dict[TaskKey, Done] = self._done.done  # last outcome, kept on recrawl
        self._errors: dict[TaskKey, str] = {}  # last failure of tasks queued for a retry
        self._delayed = TimedHeap()  # by exetime
        self._processing = TimedHeap()  # by lease deadline
        self._next_seq = 0
        #: Called with the key of each task that changed (see the package docstring).
        self.on_change: Callable[[TaskKey], object] | None = None

    def __len__(self) -> int:
        """Tasks queued or processing."""
        return len(self._active)

    def active_keys(self) -> KeysView[TaskKey]:
        """The keys of the tasks queued or processing: a live view, tested in C."""
        return self._active.keys()

    def seq_of(self, key: TaskKey) -> int | None:
        """A queued or processing task's place in FIFO order (else None), cheaply."""
        rec = self._active.get(key)
        return (
            None if rec is None else (rec[KEY] if isinstance(rec, list) else key_of(rec)) & SEQ_MASK
        )

    # -- queueing -------------------------------------------------------------------------
    def push(self, request: Request, now: float, force: bool = False) -> PushOutcome:
        """Queue ``request`` at ``max(request.exetime, now)``; see ``Frontier.push``."""
        tk = request.taskid if request.has_explicit_taskid else request.fingerprint
        if tk.__class__ is str:
            tk = task_key(tk)
        rec = self._active.get(tk)
        if rec is not None:
            if rec.__class__ is bytes and rec < _bar(request.priority, b""):
                return _MERGED  # packed, and not raised: the usual duplicate, made cheap
            return self._merge(rec, tk, request, now)
        outcome = _NEW
        if self._finished:
            done = self._finished.get(tk)
            if done is not None:
                if not force and not recrawl_due(done, request, now):
                    return _IGNORED
                outcome = _RECRAWL
        priority = request.priority
        if priority.__class__ is not int or not -MAX_PRIORITY < priority < MAX_PRIORITY:
            priority = priority_of(request)
        exetime = request.exetime
        seq = self._next_seq
        self._next_seq = seq + 1
        key = seq - (priority << SEQ_BITS)
        if exetime > now:
            rec = [key, request, 0, DELAYED, exetime, "", None]
            self._delayed.add(exetime, rec)  # not _delay: the hot path
        else:
            rec = self._ready.add_new(tk, key, request)
        self._active[tk] = rec
        if self.on_change is not None:
            self.on_change(tk)
        return outcome

    def stage(
        self, requests: Sequence[Request], now: float, force: Sequence[bool] | None,
        prepare: Callable[[Request], T],
    ) -> list[tuple[TaskKey, T | None]]:  # fmt: skip
        """Check a batch before pushing it (``check_request``): each request's key and, if
        ``push`` would queue it anew (NEW, RECRAWL), ``prepare(request)``. Nothing changes
        here, so an exception from a check or from ``prepare`` changes nothing."""
        return self._done.stage(requests, now, force, prepare, self._active)

    def _merge(self, rec: Record | bytes, tk: TaskKey, request: Request, now: float) -> PushOutcome:
        """One entry per taskid: the higher priority and the earlier exetime win (but a
        retry's time is kept)."""
        if isinstance(rec, bytes):  # ready: only a higher priority changes it
            if self._ready.raise_packed(tk, rec, priority_of(request)) and self.on_change:
                self.on_change(tk)
            return _MERGED
        where = rec[WHERE]
        if where == PROCESSING:
            return _IGNORED
        key = rec[KEY]
        priority = priority_of(request)
        new_key = (key & SEQ_MASK) - (priority << SEQ_BITS)
        higher = new_key < key
        if higher:  # on the kept request too: download slots order by it
            rec[REQ].priority = priority
        if where == READY:
            if higher:
                self._ready.rekey(rec, new_key)
            if higher and self.on_change is not None:
                self.on_change(tk)
            return _MERGED
        if higher:
            rec[KEY] = new_key  # its delayed entry is ordered by exetime, not by key
        # A task waiting for a retry keeps its back-off (a failing page is not made due
        # again by every page that links to it).
        earlier = request.exetime < rec[WHEN] and not rec[RETRIED]
        if earlier:
            rec = self._replace(tk, rec)
            self._delayed.killed()
            if request.exetime <= now:
                self._make_ready(rec)
            else:
                rec[WHEN] = request.exetime
                self._delayed.add(request.exetime, rec)
        if (higher or earlier) and self.on_change is not None:
            self.on_change(tk)
        return _MERGED

    def _make_ready(self, rec: Record) -> None:
        rec[WHERE] = READY
        rec[OWNER] = ""
        rec[LEASE] = None
        self._ready.add(rec)

    def _delay(self, rec: Record, when: float) -> None:
        rec[WHERE] = DELAYED
        rec[WHEN] = when
        rec[OWNER] = ""
        rec[LEASE] = None
        self._delayed.add(when, rec)

    def _replace(self, tk: TaskKey, rec: Record) -> Record:
        """Kill ``rec`` where it lies (a delayed or processing entry) and return a live
        copy in its place."""
        new = rec.copy()
        rec[REQ] = None
        self._active[tk] = new
        return new

    def _promote(self, now: float) -> None:
        """Move delayed tasks that are due to the ready heap."""
        for rec in self._delayed.pop_due(now):
            self._make_ready(rec)

    # -- leases ---------------------------------------------------------------------------
    def lease(self, limit: int, now: float, lease_seconds: float, owner: str = "") -> list[Lease]:
        """Up to ``limit`` due tasks, best first, each processing until
        ``now + lease_seconds``."""
        delayed = self._delayed.entries
        if delayed and delayed[0][0] <= now:
            self._promote(now)
        pop = self._ready.pop
        processing = self._processing.entries  # pushed to here: the hot path
        tick = self._processing.tick
        deadline = now + lease_seconds
        leases: list[Lease] = []
        while len(leases) < limit and (rec := pop()) is not None:
            request = rec[REQ]
            lease = Lease(request.taskid, request, rec[RETRIED], deadline)
            rec[WHERE:] = PROCESSING, deadline, owner, lease  # WHERE, WHEN, OWNER, LEASE
            heappush(processing, (deadline, next(tick), rec))
            leases.append(lease)
        self._processing.live += len(leases)
        on_change = self.on_change
        if on_change is not None:
            for lease in leases:
                on_change(request_key(lease.request))
        return leases

    def _current(self, lease: Lease) -> tuple[TaskKey, Record] | None:
        """The record of the task ``lease`` is the current attempt of, or None."""
        tk = task_key(lease.taskid)
        rec = self._active.get(tk)
        if rec is None or isinstance(rec, bytes) or rec[LEASE] is not lease:
            return None
        return tk, rec

    def _finish(self, tk: TaskKey, rec: Record, outcome: Done) -> None:
        rec[REQ] = None  # its processing entry dies in place
        self._processing.killed()
        del self._active[tk]
        self._finished[tk] = outcome
        if self._errors:
            self._errors.pop(tk, None)
        if self.on_change is not None:
            self.on_change(tk)

    def ack(self, lease: Lease, now: float) -> bool:
        """SUCCESS at ``now``; an ``auto_recrawl`` task is queued again at ``now + age``."""
        found = self._current(lease)
        if found is None:
            return False
        tk, rec = found
        request = rec[REQ]
        retried = rec[RETRIED]
        itag = request.itag
        if retried or itag is not None:
            self._finish(tk, rec, Finished(TaskState.SUCCESS, now, itag, retried, "", ""))
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
        new = self._replace(tk, rec)
        self._processing.killed()
        new[RETRIED] += 1
        self._errors[tk] = reason
        if retry_at > now:
            self._delay(new, retry_at)
        else:
            self._make_ready(new)
        if self.on_change is not None:
            self.on_change(tk)
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
        request, url = rec[REQ], mask_page_url(rec[REQ].url)
        outcome = Finished(state, now, request.itag, rec[RETRIED], reason, url)
        self._finish(tk, rec, outcome)
        self._done.keep(tk, request)  # so that a person can queue it again

    def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        """Finished tasks in ``state``, most recent first (SUCCESS tasks without a URL
        kept are listed with an empty URL)."""
        return self._done.listing(state, limit, self._active)

    def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue FAILED tasks again with ``retried`` reset, optionally only those whose
        host is ``domain`` (or a subdomain) or whose reason contains ``reason``."""
        return self._done.requeue(TaskState.FAILED, now, domain, reason, self._active, self.push)

    def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue BAD tasks again, filtered as ``retry_failed``."""
        return self._done.requeue(TaskState.BAD, now, domain, reason, self._active, self.push)

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
            new = self._replace(tk, rec)
            self._processing.killed()
            new[WHEN] = deadline
            self._processing.add(deadline, new)
            renewed += 1
            if self.on_change is not None:
                self.on_change(tk)
        return renewed

    def reclaim_expired(self, now: float) -> int:
        """Put tasks whose lease deadline is ``<= now`` back in the ready heap, at their
        old place in the order (``retried`` is unchanged: the attempt did not fail)."""
        on_change = self.on_change
        due = self._processing.pop_due(now)
        for rec in due:
            self._make_ready(rec)
            if on_change is not None:
                on_change(request_key(rec[REQ]))
        return len(due)

    # -- queries --------------------------------------------------------------------------
    def counts(self, now: float) -> FrontierCounts:
        """Tasks ready (due), delayed (not yet due) and processing."""
        self._promote(now)  # early or not, the ready order is (priority, seq) alone
        delayed, processing = self._delayed.live, self._processing.live
        return FrontierCounts(len(self._active) - delayed - processing, delayed, processing)

    def next_due(self) -> float | None:
        """The earliest exetime among delayed tasks, or None."""
        return self._delayed.first()

    def task(self, taskid: str) -> TaskInfo | None:
        """What is known of ``taskid``: ACTIVE while queued or processing."""
        v = self.view(task_key(taskid))
        return v and TaskInfo(taskid, v.url, v.state, v.retried, v.lastcrawltime, v.reason)

    def view(self, key: TaskKey) -> TaskView | None:
        """The task of ``key`` as it stands (None if it was never queued)."""
        rec = self._active.get(key)
        if rec is None:
            return self._done.view(key)
        if isinstance(rec, bytes):
            rec = self._ready.unpacked(rec)
        last = lastcrawltime_of(self._finished.get(key)) if self._finished else 0.0
        return view_of(taskid_of(key), rec, last, self._errors.get(key, ""))

    # -- restoring from storage -----------------------------------------------------------
    def restore(self, view: TaskView) -> None:
        """Put back a task read from storage, not reported to ``on_change`` (the package
        docstring). ValueError for a taskid known already, or an ACTIVE view without its
        request or place (its ``seq`` must be unique among queued tasks)."""
        tk = task_key(view.taskid)
        if tk in self._active or tk in self._finished:
            raise ValueError(f"task {view.taskid!r} is restored twice")
        if view.state is not _ACTIVE:
            self._done.restore(tk, view)
            return
        request, priority, seq = view.request, view.priority, view.seq
        if request is None or priority is None or seq is None:
            raise ValueError(f"queued task {view.taskid!r} needs its request and place")
        request.priority = priority
        key = seq - (priority << SEQ_BITS)
        delayed = view.exetime > 0 and view.deadline is None
        if delayed or view.retried:
            rec = [key, request, view.retried, READY, 0.0, "", None]
            if delayed:
                self._delay(rec, view.exetime)
            else:
                self._make_ready(rec)
            self._active[tk] = rec
        else:  # ready and never failed: packed when it can be
            self._active[tk] = self._ready.add_new(tk, key, request)
        if view.reason:
            self._errors[tk] = view.reason
        if view.lastcrawltime:
            self._finished[tk] = view.lastcrawltime
        self.skip_seq(seq + 1)

    def skip_seq(self, next_seq: int) -> None:
        """Number the tasks pushed from now on ``next_seq`` and up: for a store that
        keeps the places of tasks the queue does not hold (finished ones)."""
        if next_seq > self._next_seq:
            self._next_seq = next_seq
