"""The job database file: created whole, opened with its settings, refused when damaged.

A job database that cannot be trusted is refused before anything is fetched, with a
message naming the file and what is wrong, instead of failing mid-crawl or resuming
something other than what was stored:

- a file that is not an SQLite database, or whose pages are damaged (cut short, overwritten):
  ``PRAGMA quick_check`` at open (some 80 ms for 200,000 tasks) finds what the reads of
  a resume would not, such as a broken index that only the next write would trip over;
- a job of another schema version;
- task rows that skitter never writes: a state that is not a task state, a missing or
  mistyped taskid, time, count, priority or queue position (``check_rows``). Such a
  row means the file was changed by something else or is corrupt, so the job is
  refused as a whole rather than guessed at. A row whose stored *request* no longer
  decodes is not damage: its bookkeeping is intact, the spider changed, and the loader
  marks it BAD with the reason (listed by ``skitter job``, retried once fixed).

A new database is made under a temporary name and linked into place once its schema
is written, so a crawl never leaves a 0-byte ``job.sqlite3`` behind, whatever moment it
is killed at; an empty file is therefore a damaged job, not a new one (``JobDir``).

A lock file next to the database (``JobLock``) keeps a second process out of a job.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from skitter.exceptions import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, one process per job by convention
    fcntl = None  # type: ignore[assignment]

__all__ = ["SCHEMA_VERSION", "JobLock", "check_rows", "connect", "rollback"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    taskid        TEXT PRIMARY KEY,
    state         INTEGER NOT NULL,  -- TaskState
    priority      INTEGER,
    seq           INTEGER,           -- FIFO order within a priority
    exetime       REAL NOT NULL,     -- not before (0: due)
    retried       INTEGER NOT NULL,
    deadline      REAL,              -- lease deadline while in flight, else NULL
    owner         TEXT NOT NULL,
    lastcrawltime REAL NOT NULL,
    reason        TEXT NOT NULL,
    itag          TEXT,
    url           TEXT,
    age           REAL,
    auto_recrawl  INTEGER,
    payload       BLOB               -- skitter.http._codec
);
CREATE INDEX IF NOT EXISTS tasks_ready ON tasks (priority DESC, seq) WHERE state = 1;
CREATE INDEX IF NOT EXISTS tasks_delayed ON tasks (exetime) WHERE state = 1 AND exetime > 0;
CREATE INDEX IF NOT EXISTS tasks_processing ON tasks (deadline) WHERE deadline IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_finished ON tasks (state, seq) WHERE state > 1;
CREATE TABLE IF NOT EXISTS meta (   -- the job's other state, written with the tasks
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL             -- JSON
);
"""
# Columns a finished task's upsert leaves NULL (priority, seq, url, age, auto_recrawl,
# payload) are nullable: SQLite checks NOT NULL before it resolves ON CONFLICT.
# The indexes serve `skitter job`, the job modes and other readers; the running crawl
# reads the mirror. Partial, so each write touches at most two of them.

_NUMBER = "('integer', 'real')"
# What is wrong with a row, or NULL: every column the loader reads, as skitter writes it.
_PROBLEM = f"""CASE
    WHEN typeof(taskid) != 'text' THEN 'the taskid is ' || quote(taskid)
    WHEN typeof(state) != 'integer' OR state NOT BETWEEN 1 AND 4
        THEN 'state ' || quote(state) || ' is not a task state'
    WHEN typeof(exetime) NOT IN {_NUMBER} THEN 'exetime is ' || quote(exetime)
    WHEN typeof(retried) != 'integer' OR retried < 0 THEN 'retried is ' || quote(retried)
    WHEN typeof(lastcrawltime) NOT IN {_NUMBER}
        THEN 'lastcrawltime is ' || quote(lastcrawltime)
    WHEN typeof(reason) != 'text' THEN 'the reason is ' || typeof(reason)
    WHEN typeof(owner) != 'text' THEN 'the owner is ' || typeof(owner)
    WHEN typeof(itag) NOT IN ('text', 'null') THEN 'the itag is ' || typeof(itag)
    WHEN typeof(deadline) NOT IN ('integer', 'real', 'null')
        THEN 'the deadline is ' || quote(deadline)
    WHEN state = 1 AND typeof(priority) != 'integer'
        THEN 'a queued task''s priority is ' || quote(priority)
    WHEN state = 1 AND typeof(seq) != 'integer'
        THEN 'a queued task''s queue position (seq) is ' || quote(seq)
    WHEN state = 1 AND typeof(payload) NOT IN ('blob', 'null')
        THEN 'a queued task''s stored request is ' || typeof(payload)
    WHEN state > 2 AND typeof(url) != 'text'
        THEN 'a failed task''s url is ' || quote(url)
END"""
_FIRST_DAMAGED = f"""
SELECT taskid, problem FROM (SELECT taskid, {_PROBLEM} AS problem FROM tasks)
WHERE problem IS NOT NULL LIMIT 1
"""
_COUNT_DAMAGED = f"SELECT count(*) FROM tasks WHERE ({_PROBLEM}) IS NOT NULL"


def connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the job database at ``path`` in WAL mode; ConfigError if it is
    not a usable one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _create(path)
        db = sqlite3.connect(path, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open job database {path}: {exc}") from None
    db.row_factory = sqlite3.Row
    try:
        _prepare(db)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            raise ConfigError(
                f"{path} holds a job of schema version {version}; this skitter "
                f"reads version {SCHEMA_VERSION}"
            )
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        problems = [row[0] for row in db.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError("; ".join(" ".join(p.split()) for p in problems))
    except sqlite3.DatabaseError as exc:
        db.close()
        raise ConfigError(
            f"{path} is not a usable job database ({exc}); move it away to start a new job"
        ) from None
    except BaseException:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")


def _create(path: Path) -> None:
    """Write an empty job under a temporary name, then link it into place (which fails
    harmlessly if another process got there first)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        db = sqlite3.connect(temporary, isolation_level=None)
        try:
            _prepare(db)
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            db.close()  # the last connection: the WAL is folded in and removed
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.rename(temporary, path)
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{temporary}{suffix}")


def check_rows(db: sqlite3.Connection, path: Path) -> None:
    """ConfigError if any task row is one skitter never writes (see the module
    docstring): one scan of the table."""
    first = db.execute(_FIRST_DAMAGED).fetchone()
    if first is None:
        return
    count = db.execute(_COUNT_DAMAGED).fetchone()[0]
    taskid, problem = first
    raise ConfigError(
        f"job database {path} has {count} damaged task row{'s' if count != 1 else ''} "
        f"(the first, taskid {taskid!r}: {problem}). skitter never writes such rows: the "
        "file was changed by something else, or is corrupt. Move it away to start a new "
        "job, or start afresh with --job-mode fresh"
    )


def rollback(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if any, quietly: the error at hand is the one to
    report."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


class JobLock:
    """One process per job: an flock on ``<database>-lock``, released by the OS even on
    SIGKILL."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (once); ConfigError if another process holds it."""
        if self._fd is not None or fcntl is None:
            return
        fd = os.open(f"{self.database}-lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(f"job {self.database} is in use by another process") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None
