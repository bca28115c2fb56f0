"""The ready heap: due tasks in the order they are leased (layout: ``_records.py``).

Ready tasks never leased are *packed* when their requests allow (``skitter.http._compact``):
a million queued links must fit in 300 MB (issue 18). As a Request and a record, a
queued link weighs about 840 bytes; packed, about 250, most of it its URL and Referer.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

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
from skitter.http._compact import Callbacks, pack_request, unpack_request

__all__ = ["ReadyHeap"]


class ReadyHeap:
    """Due tasks by key (priority, then seq) in one heap of bytes: the sort keys of
    records, with a dict from sort key to record beside it, and packed entries, which
    start with their sort key. Bytes compare in C (a memcmp that ends inside the sort
    key, which is unique), without a detour through lists or tuples.

    Deletion is lazy. A record whose key changes (a merge raised its priority) gets its
    new sort key pushed and the old one dropped from the index: a popped sort key
    missing from the index is dead. A packed entry is replaced by a copy with the new
    sort key: a popped entry that is not its task's value in ``active`` (the queue's
    dict of queued tasks, shared) is dead. Dead entries are swept out once they
    outnumber the live ones.

    ``callbacks`` numbers the callables of packed requests; None when nothing is packed.
    """

    __slots__ = ("active", "callbacks", "heap", "index", "packed")

    def __init__(self, active: dict[TaskKey, Record | bytes], *, pack: bool) -> None:
        self.active = active
        self.callbacks = Callbacks() if pack else None
        self.heap: list[bytes] = []
        self.index: dict[bytes, Record] = {}  # sort key -> record, for keys still live
        self.packed = 0  # live packed entries in the heap

    def add_new(self, tk: TaskKey, key: int, request: Request) -> Record | bytes:
        """A new task's entry, ready at ``key``: packed when its request allows."""
        sk = sort_key(key)
        if self.callbacks is not None and isinstance(tk, bytes):
            payload = pack_request(request, self.callbacks)
            if payload is not None:
                entry = sk + tk + payload
                heappush(self.heap, entry)
                self.packed += 1
                return entry
        rec = [key, request, 0, READY, 0.0, "", None]
        self.index[sk] = rec
        heappush(self.heap, sk)
        return rec

    def add(self, rec: Record) -> None:
        key = sort_key(rec[KEY])
        self.index[key] = rec
        heappush(self.heap, key)

    def rekey(self, rec: Record, key: int) -> None:
        """Move a ready record to its new place ``key``."""
        del self.index[sort_key(rec[KEY])]  # the old key stays in the heap, dead
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
        heappush(self.heap, new)
        self._sweep()
        return True

    def pop(self) -> Record | None:
        """The best live record, out of the heap (a packed one made a record again and
        put in ``active``), or None when none is left."""
        heap, active = self.heap, self.active
        while heap:
            entry = heappop(heap)
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
        return None

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
        live = len(self.index) + self.packed
        dead = len(self.heap) - live
        if dead > SWEEP_MIN and dead > live:
            self.heap = list(self.index)
            self.heap += [v for v in self.active.values() if isinstance(v, bytes)]
            heapify(self.heap)
