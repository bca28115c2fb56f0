"""The memory queue's records and the timed heaps they wait in (layout: ``_queue.py``).

A queued or processing task is one small list, a *record*::

    [key, request, retried, where, when, owner, lease]

``key = seq - (priority << 48)`` is the task's place in the ready order: higher priority
first, then ``seq``, the global sequence number given at first push (strict FIFO).
``where`` says which heap holds the record; ``when`` is the exetime while delayed and
the lease deadline while processing; ``lease`` is the ``Lease`` handed out for the
current attempt (None while queued).

A task that is ready and was never leased is usually not a record but a *packed* entry,
one bytes object (so that a million queued links fit in 300 MB)::

    sort_key(key) + fingerprint + payload

(13 + 20 bytes, then ``skitter.http._compact``'s payload of the request). It is its own
entry in the ready heap, where bytes compare by their sort key first, and the value of
its task in the queue's dict; it is live while it is that value. Leasing it makes the
request and the record again.

Private to the memory package: other backends use ``MemoryTaskQueue``'s public surface.
"""

from __future__ import annotations

import itertools
from heapq import heapify, heappop, heappush
from typing import Any

from skitter._secrets import mask_page_url
from skitter.frontier._base import TaskState
from skitter.frontier._memory._task import MAX_PRIORITY, TaskView
from skitter.http import Request

__all__ = [
    "DELAYED",
    "FP_END",
    "KEY",
    "LEASE",
    "OWNER",
    "PRIORITY_BARS",
    "PROCESSING",
    "READY",
    "REQ",
    "RETRIED",
    "SEQ_BITS",
    "SEQ_MASK",
    "SORT_KEY",
    "SWEEP_MIN",
    "WHEN",
    "WHERE",
    "Record",
    "TimedHeap",
    "key_of",
    "sort_key",
    "view_of",
]

SEQ_BITS = 48  # 2.8e14 pushes before FIFO order within a priority could break
SEQ_MASK = (1 << SEQ_BITS) - 1
SORT_KEY = 13  # bytes of a sort key: a key of |priority| < 2**53 plus _KEY_OFFSET fits
FP_END = SORT_KEY + 20  # a packed entry's fingerprint ends here, its payload starts
_KEY_OFFSET = MAX_PRIORITY << SEQ_BITS  # makes every key positive: bytes sort as keys

# Fields of a record.
KEY = 0
REQ = 1
RETRIED = 2
WHERE = 3
WHEN = 4
OWNER = 5
LEASE = 6
# Values of record[WHERE].
READY = 0
DELAYED = 1
PROCESSING = 2

SWEEP_MIN = 1024  # dead heap entries tolerated before a heap may be swept

Record = list[Any]
_ACTIVE = TaskState.ACTIVE
_new_view = tuple.__new__  # a third of TaskView(...)'s cost: a flush views every row
_NONE_DUE: tuple[Record, ...] = ()


def sort_key(key: int) -> bytes:
    """``key`` as bytes that sort as the keys do."""
    return (key + _KEY_OFFSET).to_bytes(SORT_KEY, "big")


#: The sort key of the last place (the highest seq) at each common priority: a packed
#: entry below it has that priority or a higher one, so a push at that priority changes
#: nothing. (No entry is below b"": other priorities take the full merge.)
PRIORITY_BARS = {p: sort_key(SEQ_MASK - (p << SEQ_BITS)) for p in range(-100, 101)}


def key_of(entry: bytes) -> int:
    """The key of a sort key or packed entry (``sort_key``'s inverse)."""
    return int.from_bytes(entry[:SORT_KEY], "big") - _KEY_OFFSET


class TimedHeap:
    """Records by a time (the exetime of delayed tasks, the lease deadline of processing
    ones), as ``(time, tick, record)`` entries: the unique ``tick`` keeps ties from
    comparing records.

    A record that must leave other than by being popped (an ack, a renewal, an earlier
    exetime) is *killed* -- its request set to None, by the queue -- and a copy takes
    its place; dead entries are skipped when they surface. So a record sits in at most
    one heap, and is live while its request is set. Dead entries are swept out once
    they outnumber the live ones, so each sweep's O(n) is paid for by the n kills
    before it: O(1) per kill over time, and the heap stays proportional to the tasks.

    The queue's lease loop pushes to ``entries`` itself (with ``tick``) and counts the
    records in ``live``: it is the hot path.
    """

    __slots__ = ("dead", "entries", "live", "tick")

    def __init__(self) -> None:
        self.entries: list[tuple[float, int, Record]] = []
        self.live = 0
        self.dead = 0
        self.tick = itertools.count()

    def add(self, when: float, rec: Record) -> None:
        heappush(self.entries, (when, next(self.tick), rec))
        self.live += 1

    def killed(self) -> None:
        """One live entry was killed in place."""
        self.live -= 1
        self.dead += 1
        if self.dead > SWEEP_MIN and self.dead * 2 > len(self.entries):
            self.entries = [entry for entry in self.entries if entry[2][REQ] is not None]
            heapify(self.entries)
            self.dead = 0

    def pop_due(self, now: float) -> list[Record] | tuple[Record, ...]:
        """Pop the live records whose time is ``<= now``, earliest first."""
        entries = self.entries
        if not entries or entries[0][0] > now:
            return _NONE_DUE
        due = []
        while entries and entries[0][0] <= now:
            rec = heappop(entries)[2]
            if rec[REQ] is None:
                self.dead -= 1
            else:
                due.append(rec)
        self.live -= len(due)
        return due

    def first(self) -> float | None:
        """The earliest time of a live entry, or None."""
        entries = self.entries
        while entries and entries[0][2][REQ] is None:
            heappop(entries)
            self.dead -= 1
        return entries[0][0] if entries else None


def view_of(taskid: str, rec: Record, lastcrawltime: float, reason: str) -> TaskView:
    """The ``TaskView`` of a live record."""
    request: Request = rec[REQ]
    key, where, when = rec[KEY], rec[WHERE], rec[WHEN]
    return _new_view(TaskView, (
        taskid, _ACTIVE, request, -(key >> SEQ_BITS), key & SEQ_MASK,
        when if where == DELAYED else 0.0, when if where == PROCESSING else None,
        rec[OWNER], rec[RETRIED], lastcrawltime, reason, request.itag,
        mask_page_url(request.url),
    ))  # fmt: skip
