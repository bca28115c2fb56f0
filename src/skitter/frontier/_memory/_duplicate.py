"""The push that changes nothing, told from a task key alone (no request decoded).

Most links a crawl finds lead to pages already queued or crawled. A frontier served to
other processes (``skitter crawl --processes``) receives them encoded; decoding each
into a ``Request`` only for ``push`` to drop it was most of the coordinator's work. This
answers for the plain cases, reading the queue as ``MemoryTaskQueue.push`` does: a
ready task at the same or a higher priority (MERGED), a task being processed or finished
and not due for a recrawl (IGNORED). Anything else (a higher priority, a delayed task,
a recrawl due) is None: only ``push`` can say. ``push_keyed`` answers the same cases for
a batch of requests, in process.
"""

from __future__ import annotations

from collections.abc import Sequence

from skitter.frontier._base import PushOutcome
from skitter.frontier._memory._finished import lastcrawltime_of, recrawl_due
from skitter.frontier._memory._queue import MemoryTaskQueue
from skitter.frontier._memory._records import (
    KEY,
    PRIORITY_BARS,
    PROCESSING,
    READY,
    SEQ_BITS,
    SEQ_MASK,
    WHERE,
)
from skitter.frontier._memory._task import MAX_PRIORITY, TaskKey, task_key
from skitter.http import Request

__all__ = ["plain_duplicate", "push_keyed"]

_bar = PRIORITY_BARS.get
_IGNORED = PushOutcome.IGNORED  # an enum member read once: a class attribute read costs
_MERGED = PushOutcome.MERGED


def plain_duplicate(
    queue: MemoryTaskQueue, key: TaskKey | str, priority: int, age: float, now: float
) -> PushOutcome | None:
    """The outcome of pushing, unforced and without an itag, a request of task ``key``
    at ``priority`` with ``age``, if that push would change nothing; else None."""
    tk = task_key(key) if isinstance(key, str) else key
    rec = queue._active.get(tk)
    if rec is not None:
        if isinstance(rec, bytes):
            return PushOutcome.MERGED if rec < PRIORITY_BARS.get(priority, b"") else None
        where = rec[WHERE]
        if where == PROCESSING:
            return PushOutcome.IGNORED
        # A ready task kept unpacked (a callback with no table to pack it by, meta...):
        # the merge changes nothing unless the priority is higher.
        if where != READY or priority.__class__ is not int:
            return None
        if not -MAX_PRIORITY < priority < MAX_PRIORITY:
            return None
        place: int = rec[KEY]
        return PushOutcome.MERGED if (place & SEQ_MASK) - (priority << SEQ_BITS) >= place else None
    done = queue._finished.get(tk)
    if done is None or (age >= 0 and lastcrawltime_of(done) + age <= now):
        return None
    return PushOutcome.IGNORED


def push_keyed(
    queue: MemoryTaskQueue,
    requests: Sequence[Request],
    keys: Sequence[TaskKey],
    now: float,
    force: Sequence[bool] | None = None,
) -> list[PushOutcome]:
    """``queue.push`` for each of a checked batch whose keys (``check_request``'s) are known.
    The usual duplicates (a page's links are mostly pages crawled, being crawled or
    queued) are answered here as ``push`` answers them, without a call or reading
    their keys again; the rest go through ``push``."""
    active, finished = queue._active, queue._finished
    outcomes: list[PushOutcome] = []
    for at, request in enumerate(requests):
        tk = keys[at]
        forced = force is not None and force[at]
        rec = active.get(tk)
        if rec is None:
            done = finished.get(tk) if finished else None
            if done is not None and not forced and not recrawl_due(done, request, now):
                outcomes.append(_IGNORED)  # crawled, and not due again
                continue
        elif rec.__class__ is bytes:
            if rec < _bar(request.priority, b""):
                outcomes.append(_MERGED)  # queued, and not raised
                continue
        elif rec[WHERE] == PROCESSING:
            outcomes.append(_IGNORED)  # being crawled
            continue
        outcomes.append(queue.push(request, now, forced))
    return outcomes
