"""The SQLite frontier when its database fails: a write that fails (a real SQLITE_FULL,
from ``PRAGMA max_page_count``) or a checkpoint that refuses breaks it for good, loudly;
and a job database that cannot be trusted is refused at open with a clear error."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from skitter import Crawler, Spider
from skitter._job import JobDir
from skitter.exceptions import ConfigError, StorageError
from skitter.frontier import Lease, TaskState
from skitter.frontier._sqlite import SqliteFrontier
from skitter.http import Request
from skitter.testing import wait_until

T0 = 1_700_000_000.0
LEASE = 60.0
FULL = "cannot write: database or disk is full"


def req(path: str) -> Request:
    return Request(f"http://example.com/{path}")


def fill(frontier: SqliteFrontier) -> None:
    """No page more for this connection: the next write that needs one fails."""
    pages = frontier._db.execute("PRAGMA page_count").fetchone()[0]
    frontier._db.execute(f"PRAGMA max_page_count = {pages}")


def states_on_disk(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT url, state FROM tasks").fetchall())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "job" / "job.sqlite3"


def size(path: Path) -> int:
    return path.stat().st_size


def files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if not name.endswith("-lock"))


def read(path: Path) -> bytes:
    return path.read_bytes()


def rewrite(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


async def every_operation_raises(frontier: SqliteFrontier, match: str) -> None:
    stale = Lease("x", req("x"), 0, T0)  # settling any lease must raise, not only a live one
    calls: dict[str, Callable[[], Awaitable[Any]]] = {
        "push": lambda: frontier.push([req("later")], T0),
        "lease": lambda: frontier.lease(10, T0, LEASE),
        "ack": lambda: frontier.ack(stale, T0),
        "nack": lambda: frontier.nack(stale, T0, None, "failed"),
        "mark_bad": lambda: frontier.mark_bad(stale, T0, "bad"),
        "renew": lambda: frontier.renew([stale], T0, LEASE),
        "reclaim_expired": lambda: frontier.reclaim_expired(T0),
        "counts": lambda: frontier.counts(T0),
        "next_due": frontier.next_due,
        "task": lambda: frontier.task("x"),
        "flush": frontier.flush,
        "job_counts": frontier.job_counts,
        "tasks": frontier.tasks,
    }
    for name, call in calls.items():
        with pytest.raises(StorageError, match=match):  # noqa: PT012 - says which did not
            await call()
            pytest.fail(f"{name} did not raise")


async def test_a_write_behind_that_fails_breaks_the_frontier_loudly(db: Path) -> None:
    frontier = SqliteFrontier(db, flush_interval=0.01)
    heard: list[StorageError] = []
    frontier.on_error = heard.append
    await frontier.push([req("a"), req("b")], T0)
    await frontier.flush()
    fill(frontier)
    (lease,) = await frontier.lease(1, T0, LEASE)
    await frontier.ack(lease, T0)
    await frontier.push([req(f"new{i}") for i in range(500)], T0)  # needs more pages
    await wait_until(lambda: heard)  # the write behind runs in the background
    assert [str(e) for e in heard] == [f"job database {db}: {FULL}"]
    await every_operation_raises(frontier, FULL)
    with pytest.raises(StorageError, match=FULL):
        await frontier.close()
    # The database holds the state of the last good write: a then, nothing since.
    assert states_on_disk(db) == {"http://example.com/a": 1, "http://example.com/b": 1}


async def test_a_write_that_fails_inside_an_operation_raises_from_it(db: Path) -> None:
    frontier = SqliteFrontier(db, flush_ops=10)
    await frontier.push([req("a")], T0)
    await frontier.flush()
    fill(frontier)
    with pytest.raises(StorageError, match=FULL):
        await frontier.push([req(f"new{i}") for i in range(500)], T0)
    await every_operation_raises(frontier, FULL)
    with pytest.raises(StorageError, match=FULL):
        await frontier.close()


async def test_a_refused_checkpoint_records_nothing(db: Path) -> None:
    """A feed that lost items refuses the checkpoint: the acks of the tasks whose items
    it lost must not be recorded either."""
    frontier = SqliteFrontier(db)
    broken = False

    def checkpoint() -> dict[str, Any]:
        if broken:
            raise StorageError("feed 'out.jsonl': cannot write: [Errno 28] No space left")
        return {"feeds": {"out.jsonl": 100}}

    frontier.checkpoint = checkpoint
    heard: list[StorageError] = []
    frontier.on_error = heard.append
    await frontier.push([req("a"), req("b")], T0)
    await frontier.flush()
    a, b = await frontier.lease(2, T0, LEASE)
    await frontier.ack(a, T0)
    broken = True
    await frontier.ack(b, T0)
    await wait_until(lambda: heard)
    assert [str(e) for e in heard] == ["feed 'out.jsonl': cannot write: [Errno 28] No space left"]
    await every_operation_raises(frontier, "feed 'out.jsonl': cannot write")
    with pytest.raises(StorageError, match=r"feed 'out\.jsonl'"):
        await frontier.close()
    assert states_on_disk(db) == {"http://example.com/a": 1, "http://example.com/b": 1}
    again = SqliteFrontier(db)
    assert await again.meta() == {"feeds": {"out.jsonl": 100}}
    assert (await again.load()).queued == 2  # both run again on a resume
    await again.close()


async def test_a_checkpoint_that_cannot_be_stored_is_not_swallowed(db: Path) -> None:
    """Not only SQLite's own errors: a checkpoint that cannot be encoded (a statistic
    JSON cannot hold) used to escape the background write, which then never happened."""
    frontier = SqliteFrontier(db, flush_interval=0.01)
    frontier.checkpoint = lambda: {"stats": {"odd": {1, 2}}}
    heard: list[StorageError] = []
    frontier.on_error = heard.append
    await frontier.push([req("a")], T0)
    await wait_until(lambda: heard)
    assert [str(e) for e in heard] == [
        f"job database {db}: cannot write: Type is not JSON serializable: set"
    ]
    await every_operation_raises(frontier, "Type is not JSON serializable")
    with pytest.raises(StorageError):
        await frontier.close()


# -- opening a job that cannot be trusted ---------------------------------------------------
async def make_job(db: Path) -> None:
    frontier = SqliteFrontier(db)
    frontier.checkpoint = lambda: {"feeds": {"out.jsonl": 10}, "start_offset": 1}
    await frontier.push([req(f"p{i}") for i in range(2000)], T0)
    leases = await frontier.lease(1000, T0, LEASE)
    for lease in leases[:500]:
        await frontier.ack(lease, T0)
    for lease in leases[500:510]:
        await frontier.nack(lease, T0, None, "HTTP 500")
    await frontier.close()
    assert files(db.parent) == ["job.sqlite3"]  # all in the main file


class Nothing(Spider):
    name = "nothing"


async def open_job(path: Path, mode: str = "resume") -> SqliteFrontier:
    """What `skitter crawl --job-dir` does before fetching anything; the job's frontier."""
    crawler = Crawler(Nothing, job_dir=path.parent, job_mode=mode)
    frontier = crawler.build().scheduler.frontier
    assert isinstance(frontier, SqliteFrontier)
    try:
        await crawler.open_job()
    except BaseException:
        await frontier.close()
        raise
    return frontier


async def test_an_empty_database_is_not_a_new_job(db: Path) -> None:
    rewrite(db, b"")
    with pytest.raises(ConfigError, match=r"job DB is empty \(0 bytes\).*--job-mode fresh"):
        await open_job(db)
    with pytest.raises(ConfigError, match=r"empty \(0 bytes\)"):
        await open_job(db, "recrawl")
    fresh = await open_job(db, "fresh")  # as the message says
    await fresh.close()
    assert size(db) > 0


class Killed(BaseException):
    """The process dying at that moment."""


class DiesOnFirstStatement(sqlite3.Connection):
    def execute(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        raise Killed


async def test_a_new_database_is_never_left_empty(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the file was created but before anything was written in it: no
    0-byte job.sqlite3 remains (it would look like a truncated job to the next run)."""
    connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: connect(*a, **k, factory=DiesOnFirstStatement)
    )
    with pytest.raises(Killed):
        SqliteFrontier(db)
    monkeypatch.undo()
    assert files(db.parent) == []
    frontier = SqliteFrontier(db)
    assert size(db) > 0
    await frontier.close()


@pytest.mark.parametrize("cut", [0.02, 0.3, 0.6, 0.95])
async def test_a_truncated_database_is_refused(db: Path, cut: float) -> None:
    await make_job(db)
    data = read(db)
    rewrite(db, data[: int(len(data) * cut)])
    with pytest.raises(ConfigError, match=f"{db} is not a usable job database"):
        await open_job(db)


@pytest.mark.parametrize("page", [1, 5, 20, 40, 60, 100])
async def test_a_database_with_a_damaged_page_is_refused(db: Path, page: int) -> None:
    await make_job(db)
    data = bytearray(read(db))
    assert len(data) > 101 * 4096
    data[page * 4096 : (page + 1) * 4096] = os.urandom(4096)
    rewrite(db, bytes(data))
    with pytest.raises(ConfigError, match=f"{db} is not a usable job database"):
        await open_job(db)


async def test_random_bytes_are_not_a_job(db: Path) -> None:
    rewrite(db, os.urandom(50_000))
    with pytest.raises(ConfigError, match="is not a usable job database"):
        await open_job(db)


def edit(db: Path, sql: str, *params: Any) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(sql, params)


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("UPDATE tasks SET state = 7 WHERE url LIKE '%/p1'", "state 7 is not a task state"),
        ("UPDATE tasks SET state = 'done' WHERE url LIKE '%/p1'", "state 'done' is not"),
        (
            "UPDATE tasks SET priority = NULL WHERE url LIKE '%/p1999'",
            "a queued task's priority is NULL",
        ),
        (
            "UPDATE tasks SET seq = 'x' WHERE url LIKE '%/p1999'",
            r"a queued task's queue position \(seq\) is 'x'",
        ),
        ("UPDATE tasks SET retried = -1 WHERE url LIKE '%/p1'", "retried is -1"),
        ("UPDATE tasks SET exetime = 'soon' WHERE url LIKE '%/p1'", "exetime is 'soon'"),
        (
            "UPDATE tasks SET payload = 42 WHERE url LIKE '%/p1999'",
            "a queued task's stored request is integer",
        ),
        (
            "UPDATE tasks SET url = NULL WHERE url LIKE '%/p505'",
            "a failed task's url is NULL",
        ),
    ],
)
async def test_damaged_rows_refuse_the_job_before_anything_runs(
    db: Path, sql: str, problem: str
) -> None:
    await make_job(db)
    edit(db, sql)
    with pytest.raises(
        ConfigError, match=rf"has 1 damaged task row \(the first, taskid .*{problem}"
    ):
        await open_job(db)
    with pytest.raises(ConfigError, match=problem):  # `skitter job DIR` says the same
        await JobDir(db.parent).frontier(None).job_counts()
    fresh = await open_job(db, "fresh")  # the way out the message offers
    assert (await fresh.load()).found.queued == 0
    await fresh.close()


async def test_an_undecodable_request_is_bad_not_damage(db: Path) -> None:
    """Its bookkeeping is intact (the spider changed, say): counted and marked BAD, the
    job goes on (see `test_sqlite_frontier`)."""
    await make_job(db)
    edit(db, "UPDATE tasks SET payload = NULL WHERE url LIKE '%/p1999'")
    frontier = await open_job(db)
    assert frontier.report is not None and frontier.report.undecodable == 1
    (bad,) = await frontier.tasks(TaskState.BAD)
    assert bad.url == "http://example.com/p1999"
    await frontier.close()


async def test_a_checkpoint_that_is_not_json_is_refused(db: Path) -> None:
    await make_job(db)
    edit(db, "INSERT INTO meta VALUES ('stats', ?)", b"{not json")
    with pytest.raises(ConfigError, match="the checkpoint's 'stats' is not valid JSON"):
        await open_job(db)


@pytest.mark.parametrize(
    ("key", "value", "shape"),
    [
        ("stats", b'"x"', "a map of statistics"),
        ("feeds", b'{"out.jsonl": -5}', "a map of feed names to sizes"),
        ("feeds", b'{"out.jsonl": "big"}', "a map of feed names to sizes"),
        ("start_offset", b"null", "a count of start requests"),
        ("start_done", b"1", "true or false"),
        ("spider_state", b"[1]", "a map"),
    ],
)
async def test_checkpoint_values_of_the_wrong_shape_are_refused(
    db: Path, key: str, value: bytes, shape: str
) -> None:
    await make_job(db)
    edit(db, "INSERT OR REPLACE INTO meta VALUES (?, ?)", key, value)
    with pytest.raises(ConfigError, match=f"the checkpoint's '{key}' is .*, not {shape}"):
        await open_job(db)
