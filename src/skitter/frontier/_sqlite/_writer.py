"""The write-behind: which tasks changed since the last write, and writing them.

The memory queue reports every task an operation changed (``on_change``, bound to
``dirty.add``: a C call, no Python frame); a write reads each dirty task's view once,
however often it changed, and upserts its row, with the checkpoint, in one transaction.
See the package docstring for when writes happen and what they guarantee.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from skitter.exceptions import StorageError
from skitter.frontier._memory import MemoryTaskQueue, TaskKey
from skitter.frontier._sqlite._db import rollback
from skitter.frontier._sqlite._rows import UPSERT, UPSERT_META, New, row_of

__all__ = ["WriteBehind"]


class WriteBehind:
    """The changes of one loaded queue not yet on disk, written every ``interval``
    seconds after the first or as soon as ``ops`` tasks are dirty."""

    def __init__(self, db: sqlite3.Connection, path: Path, interval: float, ops: int) -> None:
        self._db = db
        self._path = path
        self._interval = interval
        self._ops = ops
        self._queue: MemoryTaskQueue | None = None
        self._timer: asyncio.TimerHandle | None = None
        #: Tasks changed since the last write.
        self.dirty: set[TaskKey] = set()
        #: Tasks queued since the last write, with what only the push knew of them.
        self.queued: dict[TaskKey, New] = {}
        #: Why a write failed (None while none has): raised by every later operation.
        self.error: str | None = None
        self._cause: BaseException | None = None
        #: ``JobStore.checkpoint`` and ``JobStore.on_error``.
        self.checkpoint: Callable[[], Mapping[str, Any]] | None = None
        self.on_error: Callable[[StorageError], None] | None = None

    def attach(self, queue: MemoryTaskQueue) -> None:
        """Hear of every change of ``queue`` from now on."""
        queue.on_change = self.dirty.add
        self._queue = queue

    def detach(self) -> None:
        """Forget the queue (after a write: nothing is pending)."""
        if self._queue is not None:
            self._queue.on_change = None
            self._queue = None

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise StorageError(self.error) from self._cause

    def changed(self) -> None:
        """After an operation: write now, or soon."""
        if len(self.dirty) >= self._ops:
            self.flush()
        elif self._timer is None and self.dirty:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._interval, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self.flush()
        except StorageError as exc:  # also raised by every later operation
            if self.on_error is not None:
                self.on_error(exc)

    def flush(self, *, last: bool = False) -> None:
        """Write the dirty tasks and the checkpoint in one transaction. Any failure
        breaks the store for good; ``last`` tries once more anyway (at close), and
        writes the checkpoint even with no task to write: the stats and the spider's
        state (``closed()`` may set it) change after the last task did."""
        if not last:
            self.raise_if_failed()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        dirty, queue = self.dirty, self._queue
        if (not dirty and not last) or queue is None:
            return
        db = self._db
        try:
            # First, so that the feeds are flushed before the acks of their items' tasks
            # are written (and a feed that lost items refuses the whole transaction).
            checkpoint = self.checkpoint() if self.checkpoint is not None else {}
            meta = [(k, orjson.dumps(v)) for k, v in checkpoint.items()]
            view, queued = queue.view, self.queued
            rows = [row_of(v, queued.get(key)) for key in dirty if (v := view(key)) is not None]
            db.execute("BEGIN")
            db.executemany(UPSERT, rows)
            if meta:
                db.executemany(UPSERT_META, meta)
            db.execute("COMMIT")
        except Exception as exc:
            rollback(db)
            if isinstance(exc, StorageError):  # the checkpoint's: a feed lost items
                error, cause = exc, exc.__cause__
            else:
                error = StorageError(f"job database {self._path}: cannot write: {exc}")
                cause = exc
            if self.error is None:
                self.error, self._cause = str(error), cause
            raise error from cause
        except BaseException:
            rollback(db)
            raise
        dirty.clear()
        self.queued.clear()
