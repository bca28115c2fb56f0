"""What the SQLite frontier does beyond the shared contract: it remembers.

Persistence across close and reopen, reclaim of in-flight tasks on open, crash safety
(the database holds the state of the last flush), the job modes, and stored requests
whose callback has gone.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from skitter.exceptions import CodecError, ConfigError
from skitter.frontier import (
    FrontierCounts,
    Lease,
    MemoryFrontier,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._sqlite import JobCounts, SqliteFrontier
from skitter.http import Request

T0 = 1_700_000_000.0
LEASE = 60.0


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


async def urls(frontier: Any, now: float = T0, limit: int = 1000) -> list[str]:
    return [lease.request.url for lease in await frontier.lease(limit, now, LEASE)]


class Spider:
    def parse(self, response: Any) -> None:
        pass

    def parse_item(self, response: Any) -> None:
        pass


class RenamedSpider:
    def parse(self, response: Any) -> None:
        pass


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "job" / "tasks.db"


async def reopen(frontier: SqliteFrontier, **kwargs: Any) -> SqliteFrontier:
    await frontier.close()
    return SqliteFrontier(frontier.path, **kwargs)


# -- persistence ------------------------------------------------------------------------
async def test_queue_order_survives_reopen(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req(f"p{i}", priority=i % 3) for i in range(30)], T0)
    await frontier.push([req("p0", priority=5)], T0)  # merged: priority raised
    frontier = await reopen(frontier)
    leased = await urls(frontier)
    expected = ["http://example.com/p0"] + [
        f"http://example.com/p{i}" for p in (2, 1, 0) for i in range(30) if i % 3 == p and i
    ]
    assert leased == expected
    await frontier.close()


async def test_states_retried_and_reasons_survive_reopen(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("ok"), req("retry"), req("fail"), req("bad")], T0)
    leases = await frontier.lease(4, T0, LEASE)
    ok, retry, fail, bad = (lease.taskid for lease in leases)
    assert await frontier.ack(leases[0], T0 + 1)
    assert await frontier.nack(leases[1], T0 + 1, T0 + 30, "HTTP 503")
    assert await frontier.nack(leases[2], T0 + 1, None, "DownloadTimeout")
    assert await frontier.mark_bad(leases[3], T0 + 1, "InvalidURL")
    before = {taskid: await frontier.task(taskid) for taskid in (ok, retry, fail, bad)}
    frontier = await reopen(frontier)
    after = {taskid: await frontier.task(taskid) for taskid in (ok, retry, fail, bad)}
    assert after == before
    assert after[retry] == TaskInfo(
        retry, "http://example.com/retry", TaskState.ACTIVE, 1, 0.0, "HTTP 503"
    )
    assert await frontier.counts(T0 + 1) == FrontierCounts(ready=0, delayed=1, processing=0)
    assert await frontier.next_due() == T0 + 30
    (lease,) = await frontier.lease(5, T0 + 30, LEASE)
    assert (lease.taskid, lease.retried) == (retry, 1)
    await frontier.close()


async def test_dupe_filter_and_recrawl_rules_survive_reopen(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a", itag="v1"), req("b", age=100), req("c")], T0)
    for lease in await frontier.lease(3, T0, LEASE):
        await frontier.ack(lease, T0)
    frontier = await reopen(frontier)
    assert await frontier.push([req("c")], T0 + 10**6) == [PushOutcome.IGNORED]
    assert await frontier.push([req("a", itag="v1")], T0 + 1) == [PushOutcome.IGNORED]
    assert await frontier.push([req("a", itag="v2")], T0 + 1) == [PushOutcome.RECRAWL]
    assert await frontier.push([req("b", age=100)], T0 + 99) == [PushOutcome.IGNORED]
    assert await frontier.push([req("b", age=100)], T0 + 100) == [PushOutcome.RECRAWL]
    assert await frontier.push([req("c")], T0 + 1, force=[True]) == [PushOutcome.RECRAWL]
    await frontier.close()


async def test_auto_recrawl_survives_reopen(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a", age=3600, auto_recrawl=True)], T0)
    (lease,) = await frontier.lease(1, T0, LEASE)
    await frontier.ack(lease, T0)
    frontier = await reopen(frontier)
    assert await frontier.next_due() == T0 + 3600
    (lease,) = await frontier.lease(1, T0 + 3600, LEASE)
    info = await frontier.task(lease.taskid)
    assert info is not None and (info.state, info.lastcrawltime) == (TaskState.ACTIVE, T0)
    assert lease.request.auto_recrawl and lease.request.age == 3600
    await frontier.close()


async def test_request_fields_and_callbacks_survive_reopen(db: Path) -> None:
    spider = Spider()
    frontier = SqliteFrontier(db, spider=spider)
    request = Request(
        "http://example.com/form",
        spider.parse_item,
        "POST",
        [("X-Token", "1")],
        b"q=1",
        meta={"depth": 2, "path": ["a", "b"]},
        cb_kwargs={"page": 3},
        taskid="form-1",
    )
    await frontier.push([request], T0)
    other = Spider()
    frontier = await reopen(frontier, spider=other)
    (lease,) = await frontier.lease(1, T0, LEASE)
    got = lease.request
    assert lease.taskid == "form-1"
    assert (got.url, got.method, got.body, list(got.headers.items())) == (
        "http://example.com/form",
        "POST",
        b"q=1",
        [(b"X-Token", [b"1"])],
    )
    assert (got.meta, got.cb_kwargs, got.callback) == (
        {"depth": 2, "path": ["a", "b"]},
        {"page": 3},
        other.parse_item,
    )
    await frontier.close()


async def test_unstorable_request_changes_nothing(db: Path) -> None:
    spider = Spider()
    frontier = SqliteFrontier(db, spider=spider)
    with pytest.raises(CodecError, match=r"<GET http://example.com/b>"):
        await frontier.push(
            [req("a", callback=spider.parse), req("b", callback=lambda r: None)], T0
        )
    assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)
    # A duplicate of a queued task is merged: its callback is never stored, never checked.
    await frontier.push([req("a", callback=spider.parse)], T0)
    assert await frontier.push([req("a", callback=lambda r: None)], T0) == [PushOutcome.MERGED]
    await frontier.close()


# -- reclaim on open ----------------------------------------------------------------------
async def test_in_flight_tasks_are_reclaimed_on_open(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a"), req("b"), req("c"), req("d", exetime=T0 + 50)], T0)
    a, b = await frontier.lease(2, T0, LEASE, owner="w1")
    assert await frontier.nack(a, T0, T0, "once")  # queued again, retried 1
    (again,) = await frontier.lease(1, T0, LEASE, owner="w1")
    assert again.taskid == a.taskid
    assert await frontier.ack(b, T0)
    frontier = await reopen(frontier)
    report = await frontier.load()
    assert report.found == JobCounts(queued=2, processing=1, succeeded=1, failed=0, bad=0)
    assert (report.reclaimed, report.undecodable, report.queued) == (1, 0, 3)
    assert await frontier.counts(T0) == FrontierCounts(ready=2, delayed=1, processing=0)
    leases = await frontier.lease(10, T0 + 50, LEASE)
    assert [(lease.request.url, lease.retried) for lease in leases] == [
        ("http://example.com/a", 1),  # kept its place and its failed attempt
        ("http://example.com/c", 0),
        ("http://example.com/d", 0),
    ]
    assert await frontier.ack(leases[0], T0 + 50)
    assert not await frontier.ack(again, T0 + 50), "old leases are gone"
    await frontier.close()


async def test_renamed_callback_marks_task_bad_and_goes_on(db: Path) -> None:
    spider = Spider()
    frontier = SqliteFrontier(db, spider=spider)
    await frontier.push(
        [req("item", callback=spider.parse_item), req("page", callback=spider.parse)], T0
    )
    frontier = await reopen(frontier, spider=RenamedSpider())
    report = await frontier.load()
    assert report.undecodable == 1
    (lease,) = await frontier.lease(10, T0, LEASE)
    assert lease.request.url == "http://example.com/page"
    await frontier.ack(lease, T0)
    info = await frontier.task(req("item").taskid)
    assert info is not None and info.state is TaskState.BAD
    assert "parse_item" in info.reason and "RenamedSpider" in info.reason
    (bad,) = await frontier.tasks(TaskState.BAD)
    assert (bad.url, bad.reason) == ("http://example.com/item", info.reason)
    # Fixed code, retried: it decodes again.
    frontier = await reopen(frontier, spider=Spider())
    assert await frontier.requeue(states=(TaskState.BAD,)) == 1
    assert await urls(frontier) == ["http://example.com/item"]
    await frontier.close()


async def test_garbage_payload_is_bad_not_a_crash(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a"), req("b")], T0)
    await frontier.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE tasks SET payload = ? WHERE url LIKE '%/a'", (b"\x80\x04garbage",))
    frontier = SqliteFrontier(db)
    assert (await frontier.load()).undecodable == 1
    assert await urls(frontier) == ["http://example.com/b"]
    (bad,) = await frontier.tasks(TaskState.BAD)
    assert "malformed" in bad.reason
    await frontier.close()


# -- crash safety -------------------------------------------------------------------------
async def test_database_holds_the_state_of_the_last_flush(db: Path, tmp_path: Path) -> None:
    """Copying the files of an open database is what a SIGKILL leaves behind."""
    frontier = SqliteFrontier(db, flush_interval=3600)
    await frontier.push([req("a"), req("b"), req("c")], T0)
    (lease,) = await frontier.lease(1, T0, LEASE)
    await frontier.flush()
    await frontier.ack(lease, T0)  # after the flush: lost in the crash
    await frontier.push([req("d")], T0)
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for name in os.listdir(db.parent):
        shutil.copy(db.parent / name, crashed / name)
    await frontier.close()
    copy = SqliteFrontier(crashed / db.name)
    report = await copy.load()
    assert (report.found.queued, report.reclaimed) == (2, 1)
    assert await urls(copy) == [f"http://example.com/{p}" for p in "abc"]
    await copy.close()


async def test_sigkill_loses_nothing_flushed(db: Path) -> None:
    script = f"""
import asyncio, os, signal, sys
sys.path.insert(0, {str(Path(__file__).parents[2] / "src")!r})
from skitter.frontier._sqlite import SqliteFrontier
from skitter.http import Request

async def main():
    frontier = SqliteFrontier({str(db)!r}, flush_interval=3600)
    await frontier.push([Request(f"http://example.com/{{i}}") for i in range(100)], 1.0)
    for lease in await frontier.lease(40, 1.0, 60.0):
        await frontier.ack(lease, 1.0)
    await frontier.lease(5, 1.0, 60.0)
    await frontier.flush()
    await frontier.push([Request("http://example.com/lost")], 1.0)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await proc.communicate()
    assert proc.returncode == -signal.SIGKILL, stderr.decode()
    frontier = SqliteFrontier(db)
    report = await frontier.load()
    assert report.found == JobCounts(queued=55, processing=5, succeeded=40, failed=0, bad=0)
    assert report.reclaimed == 5
    leased = await urls(frontier, 2.0)
    assert leased == [f"http://example.com/{i}" for i in range(40, 100)]
    await frontier.close()


async def test_changes_are_written_behind_without_an_explicit_flush(db: Path) -> None:
    frontier = SqliteFrontier(db, flush_interval=0)
    await frontier.push([req("a")], T0)
    for _ in range(10):  # the flush is a loop callback, due at once
        await asyncio.sleep(0)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT url FROM tasks").fetchall() == [("http://example.com/a",)]
    await frontier.close()


async def test_flush_ops_bounds_the_unwritten_changes(db: Path) -> None:
    frontier = SqliteFrontier(db, flush_interval=3600, flush_ops=10)
    await frontier.push([req(str(i)) for i in range(25)], T0)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (25,)
    await frontier.close()


async def test_concurrent_batch_pushes(db: Path) -> None:
    frontier = SqliteFrontier(db, flush_ops=7)
    batches = [[req(f"b{b}-{i % 20}") for i in range(40)] for b in range(20)]
    results = await asyncio.gather(*(frontier.push(batch, T0) for batch in batches))
    for outcomes in results:
        assert outcomes.count(PushOutcome.NEW) == 20
        assert outcomes.count(PushOutcome.MERGED) == 20
    frontier = await reopen(frontier)
    leased = await urls(frontier, limit=10_000)
    assert leased == [f"http://example.com/b{b}-{i}" for b in range(20) for i in range(20)]
    await frontier.close()


# -- model check: a random walk against the memory backend, reopening now and then ---------
@pytest.mark.parametrize("seed", range(4))
async def test_random_walk_matches_memory_across_reopens(db: Path, seed: int) -> None:
    rng = random.Random(seed)
    model = MemoryFrontier()
    frontier = SqliteFrontier(db, flush_ops=rng.choice([1, 5, 1000]))
    paths = [f"p{i}" for i in range(25)]
    now = T0
    held: list[tuple[Lease, Lease]] = []
    for step in range(400):
        now += rng.choice([0, 0, 1, 7])
        op = rng.random()
        if op < 0.35:
            batch = [
                req(
                    rng.choice(paths),
                    priority=rng.randrange(3),
                    exetime=now + rng.choice([0, 0, 5, 20]),
                    age=rng.choice([-1, 10]),
                    itag=rng.choice([None, None, "x"]),
                )
                for _ in range(rng.randrange(1, 5))
            ]
            force = [rng.random() < 0.1 for _ in batch]
            copies = [r.copy() for r in batch]
            assert await frontier.push(batch, now, force=force) == await model.push(
                copies, now, force=force
            ), step
        elif op < 0.55:
            n, owner = rng.randrange(1, 4), rng.choice(["", "w"])
            got = await frontier.lease(n, now, LEASE, owner)
            want = await model.lease(n, now, LEASE, owner)
            assert [(x.taskid, x.retried, x.deadline) for x in got] == [
                (x.taskid, x.retried, x.deadline) for x in want
            ], step
            held += zip(got, want, strict=True)
        elif op < 0.85 and held:
            mine, theirs = held.pop(rng.randrange(len(held)))
            kind = rng.choice(["ack", "retry", "fail", "bad"])
            if kind == "ack":
                args: tuple[Any, ...] = ("ack", now)
            elif kind == "retry":
                args = ("nack", now, now + rng.choice([0, 3]), "again")
            elif kind == "fail":
                args = ("nack", now, None, "failed")
            else:
                args = ("mark_bad", now, "bad")
            assert await getattr(frontier, args[0])(mine, *args[1:]) == await getattr(
                model, args[0]
            )(theirs, *args[1:]), step
        elif op < 0.9:
            now += LEASE
            assert await frontier.reclaim_expired(now) == await model.reclaim_expired(now)
        elif op < 0.95:
            frontier = await reopen(frontier, flush_ops=rng.choice([1, 5, 1000]))
            await model.reclaim_expired(float("inf"))  # what reopening does to leases
            held.clear()
        assert await frontier.counts(now) == await model.counts(now), step
        assert await frontier.next_due() == await model.next_due(), step
    for path in paths:
        taskid = req(path).taskid
        assert await frontier.task(taskid) == await model.task(taskid), path
    await frontier.close()


# -- job modes and inspection -------------------------------------------------------------
async def _finished_job(db: Path) -> SqliteFrontier:
    """a: SUCCESS, b: FAILED (timeout), c: FAILED (HTTP 500), d: BAD, e: queued."""
    frontier = SqliteFrontier(db)
    await frontier.push([req(p) for p in "abcde"], T0)
    a, b, c, d = await frontier.lease(4, T0, LEASE)
    await frontier.ack(a, T0)
    await frontier.nack(b, T0, None, "DownloadTimeout")
    await frontier.nack(c, T0, None, "HTTP 500")
    await frontier.mark_bad(d, T0, "InvalidURL")
    return frontier


async def test_job_counts_and_tasks_by_state(db: Path) -> None:
    frontier = await _finished_job(db)
    assert await frontier.job_counts() == JobCounts(
        queued=1, processing=0, succeeded=1, failed=2, bad=1
    )
    failed = await frontier.tasks(TaskState.FAILED)
    assert [(t.url, t.reason) for t in failed] == [
        ("http://example.com/b", "DownloadTimeout"),
        ("http://example.com/c", "HTTP 500"),
    ]
    assert len(await frontier.tasks()) == 5
    assert len(await frontier.tasks(limit=2)) == 2
    await frontier.close()


async def test_inspection_without_loading_needs_no_spider(db: Path) -> None:
    spider = Spider()
    frontier = SqliteFrontier(db, spider=spider)
    await frontier.push([req("a", callback=spider.parse_item)], T0)
    await frontier.close()
    reader = SqliteFrontier(db)  # no spider: `skitter job DIR`
    assert (await reader.job_counts()).queued == 1
    await reader.close()
    frontier = SqliteFrontier(db, spider=spider)
    assert (await frontier.load()).undecodable == 0
    await frontier.close()


async def test_retry_failed_queues_failed_tasks_at_the_back(db: Path) -> None:
    frontier = await _finished_job(db)
    assert await frontier.requeue() == 2
    assert await frontier.requeue() == 0
    leases = await frontier.lease(10, T0 + 1, LEASE)
    assert [(x.request.url, x.retried) for x in leases] == [
        ("http://example.com/e", 0),
        ("http://example.com/b", 0),
        ("http://example.com/c", 0),
    ]
    info = await frontier.task(leases[1].taskid)
    assert info is not None and (info.state, info.reason) == (TaskState.ACTIVE, "")
    await frontier.close()


async def test_retry_failed_with_a_filter_offline(db: Path) -> None:
    await (await _finished_job(db)).close()
    offline = SqliteFrontier(db)
    assert await offline.requeue(lambda task: task.reason.startswith("HTTP")) == 1
    await offline.close()
    frontier = SqliteFrontier(db)
    assert await urls(frontier) == ["http://example.com/e", "http://example.com/c"]
    await frontier.close()


async def test_mark_all_due_requeues_what_is_known(db: Path) -> None:
    frontier = await _finished_job(db)
    await frontier.push([req("later", exetime=T0 + 999)], T0)
    assert await frontier.mark_all_due() == 3
    assert sorted(await urls(frontier, T0 + 1)) == [
        f"http://example.com/{p}" for p in ("a", "b", "c", "e", "later")
    ]
    info = await frontier.task(req("d").taskid)
    assert info is not None and info.state is TaskState.BAD
    await frontier.close()


async def test_flush_all_forgets_queue_and_dupe_filter(db: Path) -> None:
    frontier = await _finished_job(db)
    await frontier.flush_all()
    assert await frontier.job_counts() == JobCounts(0, 0, 0, 0, 0)
    assert await frontier.push([req("a")], T0) == [PushOutcome.NEW]
    await frontier.close()


async def test_job_modes_are_refused_while_tasks_are_in_flight(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a")], T0)
    await frontier.lease(1, T0, LEASE)
    with pytest.raises(RuntimeError, match="1 tasks are in flight"):
        await frontier.flush_all()
    await frontier.close()


async def test_a_refused_job_mode_leaves_delayed_tasks_waiting(db: Path) -> None:
    """Counting the tasks in flight used to make every delayed task due."""
    frontier = SqliteFrontier(db)
    await frontier.push([req("a"), req("later", exetime=T0 + 100)], T0)
    await frontier.lease(1, T0, LEASE)
    for mode in (frontier.flush_all, frontier.mark_all_due):
        with pytest.raises(RuntimeError, match="1 tasks are in flight"):
            await mode()
    assert await frontier.counts(T0) == FrontierCounts(ready=0, delayed=1, processing=1)
    assert await frontier.lease(10, T0 + 99, LEASE) == []
    await frontier.close()


# -- opening ------------------------------------------------------------------------------
async def test_a_job_is_used_by_one_process_at_a_time(db: Path) -> None:
    first = SqliteFrontier(db)
    await first.load()
    second = SqliteFrontier(db)
    with pytest.raises(ConfigError, match="in use by another process"):
        await second.load()
    await second.close()
    await first.close()
    third = SqliteFrontier(db)
    await third.load()
    await third.close()


async def test_a_file_that_is_not_a_job_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(ConfigError, match="not a usable job database"):
        SqliteFrontier(path)


async def test_a_job_of_a_newer_schema_is_refused(db: Path) -> None:
    await SqliteFrontier(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(ConfigError, match="schema version 99"):
        SqliteFrontier(db)


async def test_close_is_idempotent_and_final(db: Path) -> None:
    frontier = SqliteFrontier(db)
    await frontier.push([req("a")], T0)
    await frontier.close()
    await frontier.close()
    with pytest.raises(RuntimeError, match="closed"):
        await frontier.counts(T0)


async def test_a_path_that_cannot_hold_a_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot open job database"):
        SqliteFrontier(tmp_path)  # a directory


async def test_checkpoint_meta_is_written_with_the_tasks(db: Path) -> None:
    frontier = SqliteFrontier(db)
    state = {"n": 0}

    def checkpoint() -> dict[str, int]:
        state["n"] += 1
        return {"feeds": {"out.jsonl": 120 * state["n"]}, "calls": state["n"]}

    frontier.checkpoint = checkpoint
    await frontier.push([req("a")], T0)
    await frontier.flush()
    assert await frontier.meta() == {"feeds": {"out.jsonl": 120}, "calls": 1}
    await frontier.flush()  # nothing changed: no transaction, no checkpoint
    assert state["n"] == 1
    await frontier.close()  # the last one is written all the same: what ended here
    again = SqliteFrontier(db)
    assert await again.meta() == {"feeds": {"out.jsonl": 240}, "calls": 2}
    await again.close()
