"""Task rows: the row of a task as the memory queue views it, and a job's rows read back
into a new queue. Both directions go through ``TaskView``, the queue's public view of a
task (``MemoryTaskQueue.view`` and ``MemoryTaskQueue.restore``)."""

from __future__ import annotations

import sqlite3
from typing import Any

from skitter._secrets import mask_page_url
from skitter.exceptions import CodecError
from skitter.frontier._base import TaskInfo, TaskState
from skitter.frontier._jobstore import JobCounts
from skitter.frontier._memory import MemoryTaskQueue, TaskView
from skitter.http import Request
from skitter.http.wiring import decode_request

__all__ = ["UPSERT", "UPSERT_META", "New", "Row", "count_tasks", "info", "read_tasks", "row_of"]

_ACTIVE = int(TaskState.ACTIVE)
_STATES = {int(state): state for state in TaskState}
_new_view = tuple.__new__  # TaskView(...) without its keyword handling: a load makes many

UPSERT_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)

UPSERT = """
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
#: A task queued since the last write: its stored request (payload), the request, its seq.
New = tuple[bytes, Request, int]


def row_of(view: TaskView, new: New | None) -> Row:
    """The table row of a task as it stands. NULL priority, seq, url, age, auto_recrawl
    or payload keep the stored value: a finished task no longer knows them, unless it
    was queued since the last write (``new``)."""
    request = view.request
    if request is not None:  # queued or processing
        return (
            view.taskid, _ACTIVE, view.priority, view.seq, view.exetime, view.retried,
            view.deadline, view.owner, view.lastcrawltime, view.reason, view.itag, view.url,
            request.age, request.auto_recrawl, None if new is None else new[0],
        )  # fmt: skip
    if new is None:
        priority = seq = url = age = auto_recrawl = payload = None
    else:
        payload, queued, seq = new
        priority, url, age, auto_recrawl = (
            queued.priority,
            mask_page_url(queued.url),
            queued.age,
            queued.auto_recrawl,
        )
    return (
        view.taskid, int(view.state), priority, seq, 0.0, view.retried, None, "",
        view.lastcrawltime, view.reason, view.itag, url, age, auto_recrawl, payload,
    )  # fmt: skip


def info(row: sqlite3.Row) -> TaskInfo:
    return TaskInfo(
        row["taskid"],
        row["url"] or "",
        TaskState(row["state"]),
        row["retried"],
        float(row["lastcrawltime"]),
        row["reason"],
    )


def count_tasks(db: sqlite3.Connection) -> JobCounts:
    """Tasks on disk by state (one scan of the table)."""
    by: dict[Any, int] = dict.fromkeys(("queued", "processing", 2, 3, 4), 0)
    query = "SELECT state, deadline IS NOT NULL, count(*) FROM tasks GROUP BY 1, 2"
    for state, in_flight, n in db.execute(query):
        key = ("processing" if in_flight else "queued") if state == _ACTIVE else state
        by[key] = by.get(key, 0) + n
    return JobCounts(by["queued"], by["processing"], by[2], by[3], by[4])


def read_tasks(
    db: sqlite3.Connection, spider: object | None
) -> tuple[MemoryTaskQueue, int, list[tuple[str, str]]]:
    """The job's tasks in a new queue: how many were in flight (now queued again), and
    the (reason, taskid) of those whose request no longer decodes (now BAD: the row
    keeps their payload, so ``requeue`` can queue them again once the code is fixed)."""
    queue = MemoryTaskQueue()
    next_seq = db.execute("SELECT coalesce(max(seq), -1) + 1 FROM tasks").fetchone()[0]
    reclaimed = 0
    bad: list[tuple[str, str]] = []
    for row in db.execute("SELECT * FROM tasks"):  # order: the heaps sort it
        taskid, state = row["taskid"], row["state"]
        if state != _ACTIVE:
            queue.restore(_finished(row, _STATES[state], row["reason"]))
            continue
        try:
            request = decode_request(row["payload"] or b"", spider)
        except CodecError as exc:
            bad.append((str(exc), taskid))
            queue.restore(_finished(row, TaskState.BAD, str(exc)))
            continue
        queue.restore(_new_view(TaskView, (
            taskid, TaskState.ACTIVE, request, row["priority"], row["seq"], row["exetime"],
            row["deadline"], row["owner"], row["retried"], row["lastcrawltime"], row["reason"],
            row["itag"], row["url"],
        )))  # fmt: skip
        reclaimed += row["deadline"] is not None
    queue.skip_seq(next_seq)  # past finished tasks too: seq stays unique on disk
    return queue, reclaimed, bad


def _finished(row: sqlite3.Row, state: TaskState, reason: str) -> TaskView:
    return _new_view(TaskView, (
        row["taskid"], state, None, None, None, 0.0, None, "", row["retried"],
        row["lastcrawltime"], reason, row["itag"], row["url"],
    ))  # fmt: skip
