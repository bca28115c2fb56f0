"""The ready tasks, in the order they are leased (layout: ``_records.py``).

Ready tasks never leased are *packed* when their requests allow (``skitter.http._compact``):
a million queued links must fit in 300 MB. As a Request and a record, a
queued link weighs about 840 bytes; packed, about 250, most of it its URL and Referer.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush

from skitter.frontier._memory._records import (
    FP_END,
    KEY,
    READY,
    SEQ_BITS,
    SEQ_MASK,
    SORT_KEY,
    SWEEP_MIN,
    Record,
    key_of,
    sort_key,
)
from skitter.frontier._memory._task import TaskKey
from skitter.http import Request
from skitter.http.wiring import Callbacks, pack_request, unpack_request

__all__ = ["ReadyHeap"]


class ReadyHeap:
    """Due tasks by key (priority, then seq), as bytes that sort as their keys: the sort
    keys of records (with a dict from sort key to record beside them) and packed
    entries, which start with their sort key.

    Most entries arrive in order: a new task has the highest seq yet, so it goes to the
    end of its priority's *level*, a deque, and leaving is a popleft, whatever the
    number of tasks (a heap of a million bytes objects pays twenty comparisons a pop,
    each a cache miss). The others (a task made ready again at its old place, restored,
    or moved to a higher priority) wait in ``late``, a heap; ``pop`` takes the smaller
    of the best level's head and the heap's. ``tops`` is a heap of the levels' negated
    priorities, so the best level is found without a scan.

    Deletion is lazy. A record whose key changes gets its new sort key added and the old
    one dropped from the index: a sort key missing from the index is dead. A packed
    entry is replaced by a copy with the new sort key: an entry that is not its task's
    value in ``active`` (the queue's dict of queued tasks, shared) is dead. Dead entries
    are swept out once they outnumber the live ones.

    ``callbacks`` numbers the callables of packed requests; None when nothing is packed.
    """

    __slots__ = ("active", "callbacks", "index", "late", "levels", "packed", "size", "tops")

    def __init__(self, active: dict[TaskKey, Record | bytes], *, pack: bool) -> None:
        self.active = active
        self.callbacks = Callbacks() if pack else None
        self.index: dict[bytes, Record] = {}  # sort key -> record, for keys still live
        self.levels: dict[int, deque[bytes]] = {}  # priority -> its in-order entries
        self.tops: list[int] = []  # the levels' priorities, negated: a heap
        self.late: list[bytes] = []  # entries that came out of order: a heap
        self.packed = 0  # live packed entries
        self.size = 0  # entries, live and dead

    def __len__(self) -> int:
        """Entries held, dead ones included."""
        return self.size

    def _place(self, entry: bytes, priority: int) -> None:
        level = self.levels.get(priority)
        if level is None:
            level = self.levels[priority] = deque()
            heappush(self.tops, -priority)
        if not level or level[-1] < entry:
            level.append(entry)
        else:
            heappush(self.late, entry)
        self.size += 1

    def add_new(self, tk: TaskKey, key: int, request: Request) -> Record | bytes:
        """A new task's entry, ready at ``key``: packed when its request allows."""
        sk = sort_key(key)
        priority = -(key >> SEQ_BITS)
        if self.callbacks is not None and isinstance(tk, bytes):
            payload = pack_request(request, self.callbacks)
            if payload is not None:
                entry = sk + tk + payload
                self._place(entry, priority)
                self.packed += 1
                return entry
        rec = [key, request, 0, READY, 0.0, "", None]
        self.index[sk] = rec
        self._place(sk, priority)
        return rec

    def add(self, rec: Record) -> None:
        key = rec[KEY]
        sk = sort_key(key)
        self.index[sk] = rec
        self._place(sk, -(key >> SEQ_BITS))

    def rekey(self, rec: Record, key: int) -> None:
        """Move a ready record to its new place ``key``."""
        del self.index[sort_key(rec[KEY])]  # the old key stays, dead
        rec[KEY] = key
        self.add(rec)
        self._sweep()

    def raise_packed(self, tk: TaskKey, entry: bytes, priority: int) -> bool:
        """Move a packed entry to ``priority`` if that is higher; True if it moved."""
        key = key_of(entry)
        new_key = (key & SEQ_MASK) - (priority << SEQ_BITS)
        if new_key >= key:
            return False
        new = self.active[tk] = sort_key(new_key) + entry[SORT_KEY:]  # the old one dies
        self._place(new, priority)
        self._sweep()
        return True

    def pop(self) -> Record | None:
        """The best live record, out of the heap (a packed one made a record again and
        put in ``active``), or None when none is left."""
        levels, tops, late, active = self.levels, self.tops, self.late, self.active
        while True:
            level = None
            while tops:
                level = levels[-tops[0]]
                if level:
                    break
                del levels[-heappop(tops)]
                level = None
            if late and (level is None or late[0] < level[0]):
                entry = heappop(late)
            elif level is not None:
                entry = level.popleft()
            else:
                return None
            self.size -= 1
            if len(entry) == SORT_KEY:
                rec = self.index.pop(entry, None)
                if rec is not None:
                    return rec
            else:
                tk = entry[SORT_KEY:FP_END]
                if active.get(tk) is entry:
                    self.packed -= 1
                    rec = active[tk] = self.unpacked(entry, tk)
                    return rec

    def unpacked(self, entry: bytes, fingerprint: bytes | None = None) -> Record:
        """The record of a packed entry, its request made again (``fingerprint``: the
        entry's, when read off already)."""
        assert self.callbacks is not None, "only a packing queue has packed entries"
        key = key_of(entry)
        if fingerprint is None:
            fingerprint = entry[SORT_KEY:FP_END]
        payload = memoryview(entry)[FP_END:]
        request = unpack_request(payload, self.callbacks, -(key >> SEQ_BITS), fingerprint)
        return [key, request, 0, READY, 0.0, "", None]

    def _sweep(self) -> None:
        """Once dead entries outnumber the live ones, keep the live ones only, in order."""
        live = len(self.index) + self.packed
        dead = self.size - live
        if dead <= SWEEP_MIN or dead <= live:
            return
        entries = list(self.index)
        entries += [v for v in self.active.values() if isinstance(v, bytes)]
        entries.sort()
        self.levels, self.tops, self.late, self.size = {}, [], [], 0
        for entry in entries:  # by priority, then seq: each level in order
            self._place(entry, -(key_of(entry) >> SEQ_BITS))
