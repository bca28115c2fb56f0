"""``SqliteFrontier``: the ``Frontier`` contract on a loaded ``MemoryTaskQueue``, written
behind to the job database, and the ``JobStore`` a job directory uses (package docstring)."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from skitter.exceptions import CodecError, ConfigError, StorageError
from skitter.frontier._base import Frontier, FrontierCounts, Lease, PushOutcome, TaskInfo, TaskState
from skitter.frontier._jobstore import JobCounts, ResumeReport
from skitter.frontier._memory import MemoryTaskQueue, TaskKey, request_key
from skitter.frontier._memory._duplicate import plain_duplicate
from skitter.frontier._sqlite._db import JobLock, connect
from skitter.frontier._sqlite._rows import info, read_tasks
from skitter.frontier._sqlite._table import JobTable
from skitter.frontier._sqlite._writer import WriteBehind
from skitter.http import Request, in_domain
from skitter.http.wiring import decode_request, encode_request

__all__ = ["SqliteFrontier"]

log = logging.getLogger("skitter.frontier")

_NEW, _MERGED, _RECRAWL, _IGNORED = PushOutcome


class SqliteFrontier(Frontier):
    """A ``Frontier`` in an SQLite database (WAL mode), written behind an in-memory
    queue; a ``JobStore``. ``spider`` resolves stored callbacks; see the package
    docstring."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spider: object | None = None,
        flush_interval: float = 0.05,
        flush_ops: int = 1000,
    ) -> None:
        self.path = Path(path)
        self._spider = spider
        self._queue: MemoryTaskQueue | None = None
        self._lock = JobLock(self.path)
        self._closed = False
        #: What ``load()`` found; None until then.
        self.report: ResumeReport | None = None
        self._db = connect(self.path)
        self._table = JobTable(self._db, self.path)
        self._writer = WriteBehind(self._db, self.path, flush_interval, flush_ops)

    @property
    def checkpoint(self) -> Callable[[], Mapping[str, Any]] | None:
        """Called at the start of every flush; what it returns is stored in the ``meta``
        table in the same transaction as the tasks. The crawler flushes its feeds here
        and records their sizes, so the tasks marked done and the items written never
        disagree after a crash."""
        return self._writer.checkpoint

    @checkpoint.setter
    def checkpoint(self, checkpoint: Callable[[], Mapping[str, Any]] | None) -> None:
        self._writer.checkpoint = checkpoint

    @property
    def on_error(self) -> Callable[[StorageError], None] | None:
        """Called when a write behind fails in the background (between operations): the
        crawler fails the project at once, so nothing more is dispatched."""
        return self._writer.on_error

    @on_error.setter
    def on_error(self, on_error: Callable[[StorageError], None] | None) -> None:
        self._writer.on_error = on_error

    # -- opening a job ------------------------------------------------------------------
    async def load(self) -> ResumeReport:
        """Read the job into memory (once) and report what was found."""
        self._loaded()
        assert self.report is not None
        return self.report

    def _loaded(self) -> MemoryTaskQueue:
        self._writer.raise_if_failed()
        queue = self._queue
        if queue is not None:
            return queue
        if self._closed:
            raise RuntimeError(f"{self.path}: frontier is closed")
        self._lock.acquire()
        try:
            found = self._table.counts()
            queue, reclaimed, bad = read_tasks(self._db, self._spider)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path} is not a usable job database: {exc}") from None
        self._table.settle_loaded(bad)
        self._writer.attach(queue)
        self._queue = queue
        self.report = ResumeReport(found, reclaimed, len(bad))
        return queue

    def _queued(
        self, queue: MemoryTaskQueue, key: TaskKey, payload: bytes, request: Request
    ) -> None:
        """Remember what the next write needs of a task just queued anew: should it
        finish before then, the queue no longer knows its place or its request."""
        seq = queue.seq_of(key)
        assert seq is not None  # just queued
        self._writer.queued[key] = (payload, request, seq)

    async def flush(self) -> None:
        """Write every change made so far, in one transaction."""
        self._writer.flush()

    async def close(self) -> None:
        """Flush, then release the database and the job lock. Idempotent. Raises
        StorageError if the last write fails, or if an earlier one did (it then still
        tries the last write: whatever it records is a state the crawl really had)."""
        if self._closed:
            return
        try:
            self._writer.flush(last=True)
        finally:
            self._closed = True
            self._writer.detach()
            self._queue = None
            self._db.close()
            self._lock.release()
        self._writer.raise_if_failed()

    # -- the Frontier contract ----------------------------------------------------------
    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        queue = self._loaded()
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        # All or nothing: check every request, and encode those that will be stored,
        # before anything changes. Repeats of finished pages (most links) end here.
        spider = self._spider
        staged = queue.stage(requests, now, force, lambda r: encode_request(r, spider))
        push, active = queue.push, queue.active_keys()
        outcomes = []
        for i, (key, payload) in enumerate(staged):
            if payload is None and key not in active:
                outcomes.append(_IGNORED)  # finished, not due: decided above
                continue
            request = requests[i]
            outcome = push(request, now, force is not None and force[i])
            outcomes.append(outcome)
            if outcome is _NEW or outcome is _RECRAWL:
                assert payload is not None  # not queued before this push: staged above
                self._queued(queue, key, payload, request)
        self._writer.changed()
        return outcomes

    def plain_duplicate(
        self, key: bytes | str, priority: int, age: float, now: float
    ) -> PushOutcome | None:
        return plain_duplicate(self._loaded(), key, priority, age, now)

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        leases = self._loaded().lease(limit, now, lease_seconds, owner)
        self._writer.changed()
        return leases

    async def ack(self, lease: Lease, now: float) -> bool:
        done = self._loaded().ack(lease, now)
        self._writer.changed()
        return done

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        done = self._loaded().nack(lease, now, retry_at, reason)
        self._writer.changed()
        return done

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        done = self._loaded().mark_bad(lease, now, reason)
        self._writer.changed()
        return done

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        renewed = self._loaded().renew(leases, now, lease_seconds)
        self._writer.changed()
        return renewed

    async def reclaim_expired(self, now: float) -> int:
        reclaimed = self._loaded().reclaim_expired(now)
        self._writer.changed()
        return reclaimed

    async def counts(self, now: float) -> FrontierCounts:
        return self._loaded().counts(now)

    async def next_due(self) -> float | None:
        return self._loaded().next_due()

    async def task(self, taskid: str) -> TaskInfo | None:
        return self._loaded().task(taskid)

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """The contract's ``retry_failed``: while the job is loaded (a crawl runs) each
        chosen task is pushed again through the in-memory queue and written with the
        next flush; otherwise the rows are rewritten on disk (``requeue``)."""
        return await self._requeue_now(TaskState.FAILED, now, domain, reason)

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """The contract's ``requeue_bad``, as ``retry_failed`` does it."""
        return await self._requeue_now(TaskState.BAD, now, domain, reason)

    async def _requeue_now(
        self, state: TaskState, now: float, domain: str | None, reason: str | None
    ) -> int:
        def match(task: TaskInfo) -> bool:
            return (domain is None or in_domain(task.url, domain)) and (
                reason is None or reason in task.reason
            )

        queue = self._queue
        if queue is None:
            return await self.requeue(match, states=(state,))
        self._writer.flush()
        count = 0
        for row in self._table.finished((int(state),)):
            if not match(info(row)):
                continue
            try:
                request = decode_request(row["payload"] or b"", self._spider)
            except CodecError as exc:
                log.warning("Cannot queue %s again: %s", row["url"], exc)
                continue
            request.exetime = 0.0
            if queue.push(request, now, True) is not _IGNORED:
                self._queued(queue, request_key(request), row["payload"], request)
                count += 1
        self._writer.changed()
        return count

    # -- the JobStore: job modes and inspection (`--job-dir`, `skitter job DIR`) ----------
    async def job_counts(self) -> JobCounts:
        """Tasks on disk by state (after writing pending changes)."""
        self._writer.flush()
        return self._table.counts()

    async def tasks(self, state: TaskState | None = None, limit: int = -1) -> list[TaskInfo]:
        """Tasks on disk: queued ones in queue order, finished ones most recent first
        (FAILED and BAD ones carry their reason); all of them when ``state`` is None."""
        self._writer.flush()
        return self._table.tasks(state, limit)

    async def meta(self) -> dict[str, Any]:
        """What the last checkpoint stored (empty for a new job); ConfigError if a value
        is not JSON."""
        self._writer.flush()
        return self._table.meta()

    async def clear_meta(self) -> None:
        """Forget what checkpoints stored (a fresh job)."""
        self._table.clear_meta()

    def _rewrite(self, *statements: tuple[str, Sequence[Any]]) -> None:
        """Run a job mode on disk, then drop the loaded queue: the next operation reads
        the job again. Only between crawls: a task in flight would lose its lease."""
        if self._queue is not None:
            busy = self._queue.counts(float("-inf")).processing  # -inf: promote nothing
            if busy:
                raise RuntimeError(f"{self.path}: {busy} tasks are in flight; stop the crawl first")
        self._lock.acquire()
        self._writer.flush()
        self._table.rewrite(*statements)
        self._writer.detach()
        self._queue = None
        self.report = None

    async def flush_all(self) -> None:
        """Fresh start: forget every task, queued or finished (queue and dupe filter)."""
        self._rewrite(("DELETE FROM tasks", ()))

    async def mark_all_due(self) -> int:
        """Recrawl: keep every known task, queue the finished ones again and make every
        queued one due now. BAD tasks stay BAD. Returns how many were queued again."""
        self._writer.flush()
        n = self._table.count_finished()
        self._rewrite(
            ("UPDATE tasks SET exetime = 0 WHERE state = 1", ()),
            (
                "UPDATE tasks SET state = 1, exetime = 0, retried = 0, reason = '' "
                "WHERE state IN (2, 3)",
                (),
            ),
        )
        return n

    async def requeue(
        self,
        match: Callable[[TaskInfo], bool] | None = None,
        *,
        states: Collection[TaskState] = (TaskState.FAILED,),
    ) -> int:
        """Between crawls (``skitter job --retry-failed``, ``--requeue-bad``): queue the
        finished tasks in ``states`` (FAILED, BAD) again on disk, at the back, with a
        fresh round of retries; ``match`` picks some of them. A BAD task whose request
        still cannot be read is marked BAD again when the crawl loads it. Returns how
        many were queued."""
        wanted = {int(state) for state in states}
        if not wanted <= {int(TaskState.FAILED), int(TaskState.BAD)}:
            raise ValueError(f"only FAILED and BAD tasks can be queued again, not {states}")
        self._writer.flush()
        self._table.check_rows()
        rows = self._table.finished(wanted)
        chosen = [row["taskid"] for row in rows if match is None or match(info(row))]
        if not chosen:
            return 0
        start = self._table.next_seq()
        self._rewrite(
            (
                "UPDATE tasks SET state = 1, exetime = 0, retried = 0, reason = '', seq = ? "
                "WHERE taskid = ?",
                [(start + i, taskid) for i, taskid in enumerate(chosen)],
            )
        )
        return len(chosen)
