"""The job database read and rewritten directly, not through the loaded queue: counts
and listings for ``skitter job``, the checkpoint, and the job modes' rewrites (which
run between crawls, so the loaded queue is dropped and read again afterwards)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import orjson

from skitter.exceptions import ConfigError, StorageError
from skitter.frontier._base import TaskInfo, TaskState
from skitter.frontier._jobstore import JobCounts
from skitter.frontier._sqlite._db import check_rows, rollback
from skitter.frontier._sqlite._rows import count_tasks, info

__all__ = ["JobTable"]


class JobTable:
    """A job database's tasks and checkpoint as stored."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._rows_checked = False

    def check_rows(self) -> None:
        """Refuse a job with damaged rows (once, before its tasks are first read)."""
        if not self._rows_checked:
            check_rows(self.db, self.path)
            self._rows_checked = True

    def counts(self) -> JobCounts:
        self.check_rows()
        return count_tasks(self.db)

    def tasks(self, state: TaskState | None, limit: int) -> list[TaskInfo]:
        """Queued tasks in queue order, finished ones most recent first; all of them when
        ``state`` is None."""
        self.check_rows()
        if state is None:
            query = "SELECT * FROM tasks ORDER BY seq LIMIT ?"
        elif state is TaskState.ACTIVE:
            query = "SELECT * FROM tasks WHERE state = 1 ORDER BY seq LIMIT ?"
        else:
            query = (
                f"SELECT * FROM tasks WHERE state = {int(state)} "
                "ORDER BY lastcrawltime DESC, seq LIMIT ?"
            )
        return [info(row) for row in self.db.execute(query, (limit,))]

    def finished(self, states: Collection[int]) -> list[sqlite3.Row]:
        """The rows of the finished tasks in ``states``, in queue order."""
        marks = ", ".join("?" * len(states))
        query = f"SELECT * FROM tasks WHERE state IN ({marks}) ORDER BY seq"
        return self.db.execute(query, sorted(states)).fetchall()

    def count_finished(self) -> int:
        """SUCCESS and FAILED tasks: what a recrawl queues again."""
        return int(
            self.db.execute("SELECT count(*) FROM tasks WHERE state IN (2, 3)").fetchone()[0]
        )

    def next_seq(self) -> int:
        """One past every stored place in the queue: the back of the queue."""
        return int(self.db.execute("SELECT coalesce(max(seq), -1) + 1 FROM tasks").fetchone()[0])

    def meta(self) -> dict[str, Any]:
        """What the last checkpoint stored; ConfigError if a value is not JSON."""
        meta = {}
        for key, value in self.db.execute("SELECT key, value FROM meta"):
            try:
                meta[key] = orjson.loads(value)
            except (orjson.JSONDecodeError, TypeError) as exc:
                raise ConfigError(
                    f"job database {self.path}: the checkpoint's {key!r} is not valid JSON "
                    f"({exc}); move the file away to start a new job, or start afresh with "
                    "--job-mode fresh"
                ) from None
        return meta

    def clear_meta(self) -> None:
        try:
            self.db.execute("DELETE FROM meta")
        except sqlite3.Error as exc:
            raise StorageError(f"job database {self.path}: cannot write: {exc}") from exc

    def settle_loaded(self, bad: Sequence[tuple[str, str]]) -> None:
        """After a load: no task is in flight any more (their process is gone), and the
        tasks whose request no longer decodes are BAD, with the (reason, taskid) given."""
        statements: list[tuple[str, Sequence[Any]]] = [
            ("UPDATE tasks SET deadline = NULL, owner = '' WHERE deadline IS NOT NULL", ())
        ]
        if bad:
            mark = "UPDATE tasks SET state = 4, deadline = NULL, reason = ? WHERE taskid = ?"
            statements.append((mark, bad))
        self.rewrite(*statements, check_again=False)

    def rewrite(self, *statements: tuple[str, Sequence[Any]], check_again: bool = True) -> None:
        """Run ``statements`` (each executed once per parameter tuple, or once without)
        in one transaction; StorageError if it fails (nothing is changed)."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                if params:
                    db.executemany(sql, params)
                else:
                    db.execute(sql)
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            rollback(db)
            raise StorageError(f"job database {self.path}: cannot write: {exc}") from exc
        except BaseException:
            rollback(db)
            raise
        if check_again:
            self._rows_checked = False
