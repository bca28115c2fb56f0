"""The SQLite frontier: a job directory that survives Ctrl-C and SIGKILL (issue 5).

Design: **an in-memory mirror, written behind.** Every ``Frontier`` method runs on a
``MemoryTaskQueue`` (the memory backend's own core, so both backends keep the contract
the same way by construction) and marks the tasks it changed as *dirty*. A flush writes
the current row of every dirty task in **one transaction** (an upsert per task; the
request payload, from ``skitter.http._codec``, only when the task got a new request).
Flushes happen ``flush_interval`` seconds after the first change (50 ms by default),
as soon as ``flush_ops`` tasks are dirty, on ``flush()`` and on ``close()``.

Guarantee. The database always holds the state the mirror had at the end of some
flush: the state after a *prefix* of the operations, never a mix. A SIGKILL loses at
most the operations since the last flush, and losing a suffix loses no task: a
callback's child requests are pushed before its parent is acked, so if the children
are lost the parent's ack is lost too, the parent is still queued or in flight on disk,
and it is fetched again on resume. After ``await flush()`` returns, every earlier
operation survives a crash of the process. With ``synchronous=NORMAL`` in WAL mode a
power cut may also roll back the last transactions (never corrupt the file): the same
suffix rule holds.

On the loop thread, on purpose. A flush costs about 5 us per row (indexes included):
some 1 ms every 50 ms for a crawl of 2,000 pages/s, which changes two rows per page.
An ``asyncio.to_thread`` hop costs some 45 us, so one per operation would cost ten times
more than the writes; a writer thread could take at most the ~2 % of loop time the
writes cost, and would contend with the loop for the GIL while binding parameters. So
SQLite is called synchronously: briefly, only at flushes, and at most ``flush_ops``
rows (~5 ms) at a time. Measured in ``benchmarks/frontier_bench.py``.

On open (the first operation, or ``load()``), tasks that were in flight are put back in
the queue at once -- the process that held their leases is gone -- and ``report`` says
what was found. A task whose stored request no longer decodes (its callback was renamed
since) is marked BAD with the ``CodecError``'s message and counted, instead of stopping
the crawl; its payload is kept, so ``requeue_bad`` (``skitter job DIR --requeue-bad``)
queues it again once the code is fixed. A damaged database is refused whole
(``_sqlite_db``). A lock file next to the database keeps a second process out of a job.

A write that fails (disk full, I/O error, the database locked for too long, or a
checkpoint that refuses because a feed lost items) breaks the frontier for good: every
later operation raises ``StorageError``, so the crawl stops instead of doing work it
cannot record, and ``on_error`` hears of a failure in the background at once. The
database keeps the state of the last good flush, which a resume goes on from.
``close()`` tries one last write, and raises if the frontier ever failed.

Finished tasks stay in the table: they are the dupe filter. The mirror holds them too,
as the memory backend does, so memory use is that of the memory backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from heapq import heapify
from pathlib import Path
from typing import Any

import orjson

from skitter.exceptions import CodecError, ConfigError, StorageError
from skitter.frontier._base import Frontier, FrontierCounts, Lease, PushOutcome, TaskInfo, TaskState
from skitter.frontier._memory import (
    _DELAYED,
    _KEY,
    _OWNER,
    _PROCESSING,
    _READY,
    _REQ,
    _RETRIED,
    _SEQ_BITS,
    _SEQ_MASK,
    _WHEN,
    _WHERE,
    MemoryTaskQueue,
    Record,
    TaskKey,
    _Finished,
    _recrawl_due,
    check_request,
    task_key,
)
from skitter.frontier._sqlite_db import check_rows, connect
from skitter.http import Request, in_domain
from skitter.http._codec import decode_request, encode_request

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, one process per job by convention
    fcntl = None  # type: ignore[assignment]

__all__ = ["JobCounts", "ResumeReport", "SqliteFrontier"]

log = logging.getLogger("skitter.frontier")

_NEW, _MERGED, _RECRAWL, _IGNORED = PushOutcome
_ACTIVE, _SUCCESS, _FAILED, _BAD = (int(s) for s in TaskState)

_UPSERT_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)

_UPSERT = """
INSERT INTO tasks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT (taskid) DO UPDATE SET
    state = excluded.state,
    exetime = excluded.exetime, retried = excluded.retried, deadline = excluded.deadline,
    owner = excluded.owner, lastcrawltime = excluded.lastcrawltime,
    reason = excluded.reason, itag = excluded.itag,
    priority = coalesce(excluded.priority, priority), seq = coalesce(excluded.seq, seq),
    url = coalesce(excluded.url, url), age = coalesce(excluded.age, age),
    auto_recrawl = coalesce(excluded.auto_recrawl, auto_recrawl),
    payload = coalesce(excluded.payload, payload)
"""

Row = tuple[Any, ...]
_New = tuple[bytes, Request, int]  # a task queued since the last flush: payload, request, seq


@dataclass(frozen=True, slots=True)
class JobCounts:
    """Tasks on disk by state; ``queued`` and ``processing`` are both ACTIVE."""

    queued: int
    processing: int
    succeeded: int
    failed: int
    bad: int


@dataclass(frozen=True, slots=True)
class ResumeReport:
    """What ``load()`` found: for "resuming N queued, M in-flight reclaimed"."""

    found: JobCounts
    reclaimed: int  # in-flight tasks of a previous process, queued again
    undecodable: int  # queued tasks whose request no longer decodes: now BAD

    @property
    def queued(self) -> int:
        return self.found.queued + self.reclaimed


class _Mirror(MemoryTaskQueue):
    """``MemoryTaskQueue`` plus what a durable backend needs from inside it: a task's
    row, rebuilding tasks read from disk, and hearing which tasks a reclaim put back.
    All knowledge of the memory core's private layout is kept in this class."""

    __slots__ = ("made_ready",)

    def __init__(self) -> None:
        super().__init__()
        self.made_ready: list[Record] | None = None

    def _make_ready(self, rec: Record) -> None:
        super()._make_ready(rec)
        if self.made_ready is not None:
            self.made_ready.append(rec)

    def row(self, tk: TaskKey, new: _New | None) -> Row | None:
        """The table row of ``tk`` as it stands. NULL priority, seq, url, age,
        auto_recrawl or payload keep the stored value: a finished task no longer knows
        them, unless it was queued since the last flush (``new``)."""
        taskid = tk.hex() if tk.__class__ is bytes else tk
        done = self._finished.get(tk)
        rec = self._active.get(tk)
        if rec is not None:
            request: Request = rec[_REQ]
            key, where, when = rec[_KEY], rec[_WHERE], rec[_WHEN]
            last = 0.0 if done is None else getattr(done, "lastcrawltime", done)
            return (
                taskid, _ACTIVE, -(key >> _SEQ_BITS), key & _SEQ_MASK,
                when if where == _DELAYED else 0.0, rec[_RETRIED],
                when if where == _PROCESSING else None, rec[_OWNER], last,
                self._errors.get(tk, ""), request.itag, request.url, request.age,
                request.auto_recrawl, None if new is None else new[0],
            )  # fmt: skip
        if done is None:
            return None
        if new is None:
            priority = seq = url = age = auto_recrawl = payload = None
        else:
            payload, request, seq = new
            priority, url, age, auto_recrawl = (
                request.priority,
                request.url,
                request.age,
                request.auto_recrawl,
            )
        if done.__class__ is not _Finished:
            state, last, retried, reason, itag = _SUCCESS, done, 0, "", None
        else:
            state, last, retried, reason, itag = (
                int(done.state),
                done.lastcrawltime,
                done.retried,
                done.reason,
                done.itag,
            )
        return (
            taskid, state, priority, seq, 0.0, retried, None, "", last, reason, itag, url, age,
            auto_recrawl, payload,
        )  # fmt: skip

    def restore_active(self, tk: TaskKey, request: Request, row: sqlite3.Row) -> None:
        """Queue a task read from disk at its old place; in-flight ones become ready."""
        key = row["seq"] - (row["priority"] << _SEQ_BITS)
        exetime = row["exetime"]
        if exetime > 0 and row["deadline"] is None:
            rec = [key, request, row["retried"], _DELAYED, exetime, "", None]
            self._delayed.append((exetime, next(self._tick), rec))
            self._n_delayed += 1
        else:
            rec = [key, request, row["retried"], _READY, 0.0, "", None]
            self._ready_index[key] = rec
            self._ready.append(key)
        self._active[tk] = rec
        if row["reason"]:
            self._errors[tk] = row["reason"]
        if row["lastcrawltime"]:
            self._finished[tk] = row["lastcrawltime"]

    def restore_finished(self, tk: TaskKey, state: int, row: sqlite3.Row, reason: str) -> None:
        last, itag, retried = row["lastcrawltime"], row["itag"], row["retried"]
        if state == _SUCCESS and not retried and itag is None:
            self._finished[tk] = last
        else:
            url = "" if state == _SUCCESS else row["url"]
            self._finished[tk] = _Finished(TaskState(state), last, itag, retried, reason, url)

    def restored(self, next_seq: int) -> None:
        heapify(self._ready)
        heapify(self._delayed)
        self._seq = itertools.count(next_seq)


class SqliteFrontier(Frontier):
    """A ``Frontier`` in an SQLite database (WAL mode), written behind an in-memory
    mirror. ``spider`` resolves stored callbacks; see the module docstring."""

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
        self._flush_interval = flush_interval
        self._flush_ops = flush_ops
        self._mirror: _Mirror | None = None
        self._dirty: dict[TaskKey, _New | None] = {}
        self._timer: asyncio.TimerHandle | None = None
        #: Why a write failed (None while none has): raised by every later operation.
        self._error: str | None = None
        self._cause: BaseException | None = None
        self._rows_checked = False
        self._lock_fd: int | None = None
        self._closed = False
        #: What ``load()`` found; None until then.
        self.report: ResumeReport | None = None
        #: Called at the start of every flush; what it returns is stored in the ``meta``
        #: table in the same transaction as the tasks. The crawler flushes its feeds here
        #: and records their sizes, so the tasks marked done and the items written never
        #: disagree after a crash.
        self.checkpoint: Callable[[], Mapping[str, Any]] | None = None
        #: Called when a write behind fails in the background (between operations): the
        #: crawler fails the project at once, so nothing more is dispatched.
        self.on_error: Callable[[StorageError], None] | None = None
        self._db = connect(self.path)

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise StorageError(self._error) from self._cause

    def _check_rows(self) -> None:
        """Refuse a job with damaged rows (once, before its tasks are first read)."""
        if not self._rows_checked:
            check_rows(self._db, self.path)
            self._rows_checked = True

    # -- opening a job ------------------------------------------------------------------
    def _lock(self) -> None:
        """One process per job: an flock, released by the OS even on SIGKILL."""
        if self._lock_fd is not None or fcntl is None:
            return
        fd = os.open(f"{self.path}-lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(f"job {self.path} is in use by another process") from None
        self._lock_fd = fd

    async def load(self) -> ResumeReport:
        """Read the job into memory (once) and report what was found."""
        self._loaded()
        assert self.report is not None
        return self.report

    def _loaded(self) -> _Mirror:
        if self._error is not None:
            raise StorageError(self._error) from self._cause
        mirror = self._mirror
        if mirror is not None:
            return mirror
        if self._closed:
            raise RuntimeError(f"{self.path}: frontier is closed")
        self._lock()
        try:
            mirror, found, reclaimed, bad = self._read()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path} is not a usable job database: {exc}") from None
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "UPDATE tasks SET deadline = NULL, owner = '' WHERE deadline IS NOT NULL"
            )
            self._db.executemany(
                "UPDATE tasks SET state = 4, deadline = NULL, reason = ? WHERE taskid = ?", bad
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StorageError(f"job database {self.path}: cannot write: {exc}") from exc
        self._mirror = mirror
        self.report = ResumeReport(found, reclaimed, len(bad))
        return mirror

    def _read(self) -> tuple[_Mirror, JobCounts, int, list[tuple[str, str]]]:
        """The job's tasks in a new mirror: what was found, how many were in flight, and
        the (reason, taskid) of those whose request no longer decodes."""
        found = self._counts()
        mirror = _Mirror()
        next_seq = self._db.execute("SELECT coalesce(max(seq), -1) + 1 FROM tasks").fetchone()[0]
        reclaimed = 0
        bad: list[tuple[str, str]] = []
        cursor = self._db.execute("SELECT * FROM tasks")  # order: the heaps sort it
        for row in cursor:
            taskid, state = row["taskid"], row["state"]
            tk = task_key(taskid)
            if state != _ACTIVE:
                mirror.restore_finished(tk, state, row, row["reason"])
                continue
            try:
                request = decode_request(row["payload"] or b"", self._spider)
            except CodecError as exc:
                bad.append((str(exc), taskid))
                mirror.restore_finished(tk, _BAD, row, str(exc))
                continue
            request.priority = row["priority"]
            mirror.restore_active(tk, request, row)
            reclaimed += row["deadline"] is not None
        mirror.restored(next_seq)
        return mirror, found, reclaimed, bad

    # -- writing behind -----------------------------------------------------------------
    def _changed(self) -> None:
        """After an operation marked tasks dirty: flush now, or soon."""
        if len(self._dirty) >= self._flush_ops:
            self._flush_now()
        elif self._timer is None and self._dirty:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._flush_interval, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self._flush_now()
        except StorageError as exc:  # also raised by every later operation
            if self.on_error is not None:
                self.on_error(exc)

    def _flush_now(self, *, last: bool = False) -> None:
        """Write the dirty tasks and the checkpoint in one transaction. Any failure
        breaks the frontier (see the module docstring); ``last`` tries once more
        anyway (at close)."""
        if not last:
            self._raise_if_failed()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        dirty = self._dirty
        mirror = self._mirror
        if not dirty or mirror is None:
            return
        db = self._db
        try:
            # First, so that the feeds are flushed before the acks of their items' tasks
            # are written (and a feed that lost items refuses the whole transaction).
            checkpoint = self.checkpoint() if self.checkpoint is not None else {}
            meta = [(k, orjson.dumps(v)) for k, v in checkpoint.items()]
            row = mirror.row
            rows = [r for tk, payload in dirty.items() if (r := row(tk, payload)) is not None]
            db.execute("BEGIN")
            db.executemany(_UPSERT, rows)
            if meta:
                db.executemany(_UPSERT_META, meta)
            db.execute("COMMIT")
        except Exception as exc:
            self._rollback()
            if isinstance(exc, StorageError):  # the checkpoint's: a feed lost items
                error, cause = exc, exc.__cause__
            else:
                error, cause = StorageError(f"job database {self.path}: cannot write: {exc}"), exc
            if self._error is None:
                self._error, self._cause = str(error), cause
            raise error from cause
        except BaseException:
            self._rollback()
            raise
        dirty.clear()

    def _rollback(self) -> None:
        if self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the error at hand is the one to report
                self._db.execute("ROLLBACK")

    async def flush(self) -> None:
        """Write every change made so far, in one transaction."""
        self._flush_now()

    async def close(self) -> None:
        """Flush, then release the database and the job lock. Idempotent. Raises
        StorageError if the last write fails, or if an earlier one did (it then still
        tries the last write: whatever it records is a state the crawl really had)."""
        if self._closed:
            return
        try:
            self._flush_now(last=True)
        finally:
            self._closed = True
            self._mirror = None
            self._db.close()
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None
        self._raise_if_failed()

    # -- the Frontier contract ----------------------------------------------------------
    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        mirror = self._loaded()
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        # All or nothing: check every request, and encode those that will be stored,
        # before anything changes. Repeats of finished pages (most links) end here.
        active, finished = mirror._active, mirror._finished
        staged: list[tuple[TaskKey, bytes | None]] = []
        for i, request in enumerate(requests):
            check_request(request)
            tk = request.taskid if request.has_explicit_taskid else request.fingerprint
            if tk.__class__ is str:
                tk = task_key(tk)
            payload = None
            if tk not in active:
                done = finished.get(tk) if finished else None
                if done is None or (force and force[i]) or _recrawl_due(done, request, now):
                    payload = encode_request(request, self._spider)
            staged.append((tk, payload))
        dirty = self._dirty
        push = mirror.push
        outcomes = []
        for i, (tk, payload) in enumerate(staged):
            rec = active.get(tk)
            if rec is None and payload is None:
                outcomes.append(_IGNORED)  # finished, not due: decided above
                continue
            request = requests[i]
            before = None if rec is None else (rec[_KEY], rec[_WHEN], rec[_WHERE])
            outcome = push(request, now, bool(force and force[i]))
            outcomes.append(outcome)
            if outcome is _NEW or outcome is _RECRAWL:
                assert payload is not None  # not queued before this push: staged above
                dirty[tk] = (payload, request, active[tk][_KEY] & _SEQ_MASK)
            elif outcome is _MERGED and tk not in dirty:
                rec = active[tk]
                if before != (rec[_KEY], rec[_WHEN], rec[_WHERE]):
                    dirty[tk] = None
        self._changed()
        return outcomes

    def _touch(self, taskids: Sequence[str]) -> None:
        dirty = self._dirty
        for taskid in taskids:
            tk = task_key(taskid)
            if tk not in dirty:
                dirty[tk] = None
        self._changed()

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        leases = self._loaded().lease(limit, now, lease_seconds, owner)
        if leases:
            self._touch([lease.taskid for lease in leases])
        return leases

    async def ack(self, lease: Lease, now: float) -> bool:
        done = self._loaded().ack(lease, now)
        if done:
            self._touch((lease.taskid,))
        return done

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        done = self._loaded().nack(lease, now, retry_at, reason)
        if done:
            self._touch((lease.taskid,))
        return done

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        done = self._loaded().mark_bad(lease, now, reason)
        if done:
            self._touch((lease.taskid,))
        return done

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        renewed = self._loaded().renew(leases, now, lease_seconds)
        if renewed:
            self._touch([lease.taskid for lease in leases])
        return renewed

    async def reclaim_expired(self, now: float) -> int:
        mirror = self._loaded()
        mirror.made_ready = []
        try:
            reclaimed = mirror.reclaim_expired(now)
            back = [rec[_REQ].taskid for rec in mirror.made_ready]
        finally:
            mirror.made_ready = None
        if back:
            self._touch(back)
        return reclaimed

    async def counts(self, now: float) -> FrontierCounts:
        return self._loaded().counts(now)

    async def next_due(self) -> float | None:
        return self._loaded().next_due()

    async def task(self, taskid: str) -> TaskInfo | None:
        return self._loaded().task(taskid)

    # -- job modes and inspection (`skitter crawl --job-dir`, `skitter job DIR`) ----------
    def _counts(self) -> JobCounts:
        self._check_rows()
        by = dict.fromkeys(("queued", "processing", _SUCCESS, _FAILED, _BAD), 0)
        query = "SELECT state, deadline IS NOT NULL, count(*) FROM tasks GROUP BY 1, 2"
        for state, in_flight, n in self._db.execute(query):
            key = ("processing" if in_flight else "queued") if state == _ACTIVE else state
            by[key] = by.get(key, 0) + n
        return JobCounts(by["queued"], by["processing"], by[_SUCCESS], by[_FAILED], by[_BAD])

    async def job_counts(self) -> JobCounts:
        """Tasks on disk by state (after writing pending changes)."""
        self._flush_now()
        return self._counts()

    async def tasks(self, state: TaskState | None = None, limit: int = -1) -> list[TaskInfo]:
        """Tasks on disk: queued ones in queue order, finished ones most recent first
        (FAILED and BAD ones carry their reason); all of them when ``state`` is None."""
        self._flush_now()
        self._check_rows()
        if state is None:
            query = "SELECT * FROM tasks ORDER BY seq LIMIT ?"
        elif state is TaskState.ACTIVE:
            query = "SELECT * FROM tasks WHERE state = 1 ORDER BY seq LIMIT ?"
        else:
            query = (
                f"SELECT * FROM tasks WHERE state = {int(state)} "
                "ORDER BY lastcrawltime DESC, seq LIMIT ?"
            )
        return [_info(row) for row in self._db.execute(query, (limit,))]

    async def meta(self) -> dict[str, Any]:
        """What the last checkpoint stored (empty for a new job); ConfigError if a value
        is not JSON."""
        self._flush_now()
        meta = {}
        for key, value in self._db.execute("SELECT key, value FROM meta"):
            try:
                meta[key] = orjson.loads(value)
            except (orjson.JSONDecodeError, TypeError) as exc:
                raise ConfigError(
                    f"job database {self.path}: the checkpoint's {key!r} is not valid JSON "
                    f"({exc}); move the file away to start a new job, or start afresh with "
                    "--job-mode fresh"
                ) from None
        return meta

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
        def match(info: TaskInfo) -> bool:
            return (domain is None or in_domain(info.url, domain)) and (
                reason is None or reason in info.reason
            )

        mirror = self._mirror
        if mirror is None:
            return await self.requeue(match, states=(state,))
        self._flush_now()
        count = 0
        rows = self._db.execute(
            "SELECT * FROM tasks WHERE state = ? ORDER BY seq", (int(state),)
        ).fetchall()
        for row in rows:
            if not match(_info(row)):
                continue
            try:
                request = decode_request(row["payload"] or b"", self._spider)
            except CodecError as exc:
                log.warning("Cannot queue %s again: %s", row["url"], exc)
                continue
            request.exetime = 0.0
            tk = task_key(row["taskid"])
            if mirror.push(request, now, True) is not _IGNORED:
                seq = mirror._active[tk][_KEY] & _SEQ_MASK
                self._dirty[tk] = (row["payload"], request, seq)
                count += 1
        self._changed()
        return count

    def _rewrite(self, *statements: tuple[str, Sequence[Any]]) -> None:
        """Run a job mode on disk, then drop the mirror: the next operation reloads it.
        Only between crawls: a task in flight would lose its lease."""
        if self._mirror is not None:
            busy = self._mirror.counts(float("inf")).processing
            if busy:
                raise RuntimeError(f"{self.path}: {busy} tasks are in flight; stop the crawl first")
        self._lock()
        self._flush_now()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                if params:
                    self._db.executemany(sql, params)
                else:
                    self._db.execute(sql)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StorageError(f"job database {self.path}: cannot write: {exc}") from exc
        except BaseException:
            self._rollback()
            raise
        self._mirror = None
        self.report = None
        self._rows_checked = False

    async def clear_meta(self) -> None:
        """Forget what checkpoints stored (a fresh job)."""
        try:
            self._db.execute("DELETE FROM meta")
        except sqlite3.Error as exc:
            raise StorageError(f"job database {self.path}: cannot write: {exc}") from exc

    async def flush_all(self) -> None:
        """Fresh start: forget every task, queued or finished (queue and dupe filter)."""
        self._rewrite(("DELETE FROM tasks", ()))

    async def mark_all_due(self) -> int:
        """Recrawl: keep every known task, queue the finished ones again and make every
        queued one due now. BAD tasks stay BAD. Returns how many were queued again."""
        self._flush_now()
        n = self._db.execute("SELECT count(*) FROM tasks WHERE state IN (2, 3)").fetchone()[0]
        self._rewrite(
            ("UPDATE tasks SET exetime = 0 WHERE state = 1", ()),
            (
                "UPDATE tasks SET state = 1, exetime = 0, retried = 0, reason = '' "
                "WHERE state IN (2, 3)",
                (),
            ),
        )
        return int(n)

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
        if not wanted <= {_FAILED, _BAD}:
            raise ValueError(f"only FAILED and BAD tasks can be queued again, not {states}")
        self._flush_now()
        self._check_rows()
        marks = ", ".join("?" * len(wanted))
        rows = self._db.execute(
            f"SELECT * FROM tasks WHERE state IN ({marks}) ORDER BY seq", sorted(wanted)
        )
        chosen = [row["taskid"] for row in rows if match is None or match(_info(row))]
        if not chosen:
            return 0
        start = self._db.execute("SELECT coalesce(max(seq), -1) + 1 FROM tasks").fetchone()[0]
        self._rewrite(
            (
                "UPDATE tasks SET state = 1, exetime = 0, retried = 0, reason = '', seq = ? "
                "WHERE taskid = ?",
                [(start + i, taskid) for i, taskid in enumerate(chosen)],
            )
        )
        return len(chosen)


def _info(row: sqlite3.Row) -> TaskInfo:
    return TaskInfo(
        row["taskid"],
        row["url"] or "",
        TaskState(row["state"]),
        row["retried"],
        float(row["lastcrawltime"]),
        row["reason"],
    )
