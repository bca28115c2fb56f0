"""Packed entries: a ready task as one bytes object (layout: ``_records.py``).

A million queued links must fit in 300 MB (issue 18). As a Request and a record, a
queued link weighs about 840 bytes; packed, about 250, most of it its URL and Referer.
"""

from __future__ import annotations

from skitter.frontier._memory._records import (
    FP_END,
    READY,
    SEQ_BITS,
    SEQ_MASK,
    SORT_KEY,
    Record,
    key_of,
    sort_key,
)
from skitter.http import Request
from skitter.http._compact import Callbacks, pack_request, unpack_request

__all__ = ["Packer"]


class Packer:
    """Packs the requests of one queue's ready tasks, and makes them records again.

    It holds the callbacks of the packed requests (``Callbacks``), by number."""

    __slots__ = ("callbacks",)

    def __init__(self) -> None:
        self.callbacks = Callbacks()

    def pack(self, request: Request, fingerprint: bytes, sort_key: bytes) -> bytes | None:
        """The packed entry of ``request``, ready at ``sort_key``, or None when it must be
        kept as it is."""
        payload = pack_request(request, self.callbacks)
        return None if payload is None else sort_key + fingerprint + payload

    def record(self, entry: bytes, fingerprint: bytes) -> Record:
        """The ready record of a packed entry (its ``fingerprint`` read off already),
        with its request made again."""
        key = key_of(entry)
        payload = memoryview(entry)[FP_END:]
        request = unpack_request(payload, self.callbacks, -(key >> SEQ_BITS), fingerprint)
        return [key, request, 0, READY, 0.0, "", None]


def raised(entry: bytes, priority: int) -> bytes | None:
    """A copy of the packed ``entry`` at ``priority`` if that is higher than its own
    (a merge), else None."""
    key = key_of(entry)
    new_key = (key & SEQ_MASK) - (priority << SEQ_BITS)
    return sort_key(new_key) + entry[SORT_KEY:] if new_key < key else None
