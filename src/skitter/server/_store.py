"""``RunStore``: the service's memory of runs, in one SQLite file.

Every run (a ``skitter crawl`` the service started) is one row: what was asked (project,
version, spider, arguments, settings overrides with secrets masked), when it started and
ended, how it ended (``outcome``: finished, failed, monitors_failed, cancelled,
interrupted), its exit status, final stats and where its log and items are. A row is
written when the run is queued and updated as it moves, so a service that stops, or is
killed, mid-run leaves it ``running`` on disk; ``RunStore.open`` turns every such row into
``interrupted`` at the next start, so that a run is never shown finished unless its
process said so.

The standard library's ``sqlite3`` is enough: one writer (this process), small rows, a
few writes per run. Calls are short and made from the event loop's thread; the file is in
WAL mode so that a reader (a backup, ``sqlite3`` on the command line) never blocks it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

__all__ = ["ENDED", "Run", "RunStore"]

#: Outcomes of a run that has ended; a run without one is pending or running.
ENDED = ("finished", "failed", "monitors_failed", "cancelled", "interrupted")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    job TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    spider TEXT NOT NULL,
    version TEXT NOT NULL,
    args TEXT NOT NULL,
    settings TEXT NOT NULL,
    state TEXT NOT NULL,
    outcome TEXT,
    queued_at REAL NOT NULL,
    started_at REAL,
    ended_at REAL,
    pid INTEGER,
    exit_status INTEGER,
    finish_reason TEXT,
    stats TEXT,
    items INTEGER,
    schedule TEXT,
    cluster_job TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_project ON runs (project, queued_at);
"""
_COLUMNS = (
    "job", "project", "spider", "version", "args", "settings", "state", "outcome",
    "queued_at", "started_at", "ended_at", "pid", "exit_status", "finish_reason", "stats",
    "items", "schedule", "cluster_job",
)  # fmt: skip


@dataclass(slots=True)
class Run:
    """One run as stored. ``settings`` holds the overrides with secret values masked:
    the real ones only ever reach the run's process."""

    job: str
    project: str
    spider: str
    version: str
    args: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    state: str = "pending"  # pending, running, ended
    outcome: str | None = None
    queued_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    pid: int | None = None
    exit_status: int | None = None
    finish_reason: str | None = None
    stats: dict[str, Any] | None = None
    items: int | None = None
    schedule: str | None = None  # the schedule that started it, if one did
    #: The distributed job (``SPIDER:JOB`` on the service's Redis) of a dispatched run.
    cluster_job: str | None = None

    def to_row(self) -> tuple[Any, ...]:
        values = [getattr(self, name) for name in _COLUMNS]
        for index in (4, 5):  # args, settings
            values[index] = orjson.dumps(values[index]).decode()
        values[14] = None if self.stats is None else orjson.dumps(self.stats).decode()
        return tuple(values)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Run:
        data = dict(zip(_COLUMNS, row, strict=True))
        data["args"] = orjson.loads(data["args"])
        data["settings"] = orjson.loads(data["settings"])
        if data["stats"] is not None:
            data["stats"] = orjson.loads(data["stats"])
        return cls(**data)


class RunStore:
    """The runs table of ``path``; ``keep_count``/``keep_seconds`` bound how many ended
    runs are kept (``prune``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        known = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        if "cluster_job" not in known:  # a history from before dispatching: add the column
            self._db.execute("ALTER TABLE runs ADD COLUMN cluster_job TEXT")

    @classmethod
    def open(cls, path: Path, now: float) -> tuple[RunStore, list[str]]:
        """The store at ``path``, with the runs a previous service left pending or
        running marked ``interrupted`` (at ``now``); their job ids are returned."""
        store = cls(path)
        return store, store.interrupt_unfinished(now)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def interrupt_unfinished(self, now: float) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT job FROM runs WHERE state != 'ended'").fetchall()
            self._db.execute(
                "UPDATE runs SET state='ended', outcome='interrupted', ended_at=? "
                "WHERE state != 'ended'",
                (now,),
            )
        return [job for (job,) in rows]

    def add(self, run: Run) -> None:
        marks = ", ".join("?" * len(_COLUMNS))
        with self._lock:
            self._db.execute(f"INSERT INTO runs VALUES ({marks})", run.to_row())

    def save(self, run: Run) -> None:
        sets = ", ".join(f"{name}=?" for name in _COLUMNS[1:])
        row = run.to_row()
        with self._lock:
            self._db.execute(f"UPDATE runs SET {sets} WHERE job=?", (*row[1:], row[0]))

    def get(self, job: str) -> Run | None:
        rows = self._select("WHERE job=?", (job,))
        return rows[0] if rows else None

    def exists(self, job: str) -> bool:
        return self.get(job) is not None

    def query(
        self,
        *,
        project: str | None = None,
        spider: str | None = None,
        state: str | None = None,
        outcome: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Run]:
        """Runs, newest first, filtered by the fields given."""
        wanted: Mapping[str, str | None] = {
            "project": project, "spider": spider, "state": state, "outcome": outcome,
        }  # fmt: skip
        terms = [(f"{name}=?", value) for name, value in wanted.items() if value]
        where = " AND ".join(term for term, _ in terms)
        clause = f"WHERE {where} " if where else ""
        clause += "ORDER BY queued_at DESC, rowid DESC"
        params: list[Any] = [value for _, value in terms]
        if limit is not None:
            clause += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return self._select(clause, tuple(params))

    def count(self, state: str) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT COUNT(*) FROM runs WHERE state=?", (state,)).fetchone()
        return int(n)

    def projects(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT project FROM runs ORDER BY project")
            return [name for (name,) in rows]

    def prune(self, *, keep_count: int | None, older_than: float | None) -> list[Run]:
        """Forget ended runs beyond the newest ``keep_count`` or ended before
        ``older_than``; the forgotten runs are returned, for their files to go too."""
        ended = self._select("WHERE state='ended' ORDER BY ended_at DESC, rowid DESC", ())
        doomed = [
            run
            for index, run in enumerate(ended)
            if (keep_count is not None and index >= keep_count)
            or (older_than is not None and (run.ended_at or 0.0) < older_than)
        ]
        with self._lock:
            self._db.executemany("DELETE FROM runs WHERE job=?", [(r.job,) for r in doomed])
        return doomed

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[Run]:
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM runs {clause}", params)
            return [Run.from_row(row) for row in rows]

    def __iter__(self) -> Iterator[Run]:
        return iter(self.query())
