"""Reading the Lua scripts' stored values back in Python, for ``task()`` and inspection.

The layouts are written by ``lua/_common.lua`` (record fields, the packed outcome in the
``done`` hash, the ``bad`` hash's values); this module is their only Python reader, so a
change of layout touches these two files together.

Anyone who can write to the Redis can plant values, so nothing is trusted: every field
is checked for its type and range (finite numbers, known states), as the scripts check
them. What fails reads as an unreadable task (``task``) or is left out of a listing
(``tasks``, ``leased``), never as an exception: the dashboard and ``skitter job`` show
the rest. Moving it aside is for the scripts that change the job (lease, reclaim,
push), which see it on their way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec

from skitter.frontier._base import TaskInfo, TaskState

__all__ = ["BadEntry", "LeasedTask", "leased_task", "parse_bad", "task_info"]

# Fields of a task record (0-based here; 1-based in Lua).
_RETRIED = 2
_WHERE = 3
_WHEN = 4
_OWNER = 5
_REASON = 7
_URL = 11
_NFIELDS = 12
_PROCESSING = 2
_MAX_RETRIED = 2**31 - 1

_decode = msgspec.msgpack.Decoder().decode
_FINISHED = {int(TaskState.SUCCESS), int(TaskState.FAILED), int(TaskState.BAD)}


def _time(value: Any) -> float | None:
    """A finite number (a time), or None."""
    if value.__class__ is bool or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    """A retry count: an integer in range, or None."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if value.__class__ is not int or not 0 <= value <= _MAX_RETRIED:
        return None
    return int(value)


def _record(raw: bytes) -> list[Any] | None:
    """A task record's fields, or None if it is not one (what Python reads of it)."""
    try:
        fields = _decode(raw)
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
        return None
    if (
        not isinstance(fields, list)
        or len(fields) != _NFIELDS
        or _count(fields[_RETRIED]) is None
        or _time(fields[_WHEN]) is None
        or not all(isinstance(fields[i], str) for i in (_OWNER, _REASON, _URL))
    ):
        return None
    return fields


def _finished(raw: bytes) -> tuple[TaskState, float, int, str, str] | None:
    """state, lastcrawltime, retried, reason, url of a ``done`` value, or None."""
    if raw[:1] and 0x90 <= raw[0] <= 0x9F:
        try:
            fields = _decode(raw)
        except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
            return None
        if not isinstance(fields, list) or len(fields) < 6:
            return None
        state, last, _itag, retried, reason, url = fields[:6]
        when, count = _time(last), _count(retried)
        if (
            state not in _FINISHED
            or state.__class__ is not int
            or when is None
            or count is None
            or not isinstance(reason, str)
            or not isinstance(url, str)
        ):
            return None
        return TaskState(state), when, count, reason, url
    try:
        when = _time(float(raw))
    except ValueError:
        return None
    return None if when is None else (TaskState.SUCCESS, when, 0, "", "")


def task_info(taskid: str, record: bytes | None, done: bytes | None) -> TaskInfo | None:
    """What the ``tasks`` and ``done`` hashes say of ``taskid`` (as ``MemoryTaskQueue.task``)."""
    finished = _finished(done) if done is not None else None
    if record is not None:
        last = finished[1] if finished is not None else 0.0
        fields = _record(record)
        if fields is None:
            return TaskInfo(taskid, "", TaskState.ACTIVE, 0, last, "unreadable task record")
        return TaskInfo(
            taskid, fields[_URL], TaskState.ACTIVE, int(fields[_RETRIED]), last, fields[_REASON]
        )
    if finished is None:
        return None  # never seen, or its outcome is unreadable (the next push moves it aside)
    state, last, retried, reason, url = finished
    return TaskInfo(taskid, url, state, retried, last, reason)


@dataclass(frozen=True, slots=True)
class BadEntry:
    """Something moved aside instead of being run: where it was, when, why, and its bytes."""

    key: bytes  # the queue entry or taskid it was found under
    time: float
    reason: str
    raw: bytes


def parse_bad(key: bytes, value: bytes) -> BadEntry:
    head, _, raw = value.partition(b"\0")
    when, _, reason = head.decode("utf-8", "replace").partition(" ")
    try:
        time = float(when)
    except ValueError:
        time = 0.0
    return BadEntry(key, time if math.isfinite(time) else 0.0, reason, raw)


@dataclass(frozen=True, slots=True)
class LeasedTask:
    """A task in flight somewhere in the cluster: which worker holds it, until when
    (Redis's clock)."""

    taskid: str
    url: str
    owner: str
    deadline: float
    retried: int


def leased_task(taskid: str, record: bytes | None) -> LeasedTask | None:
    """The lease recorded in a task record, or None if there is none (or it is unreadable)."""
    if record is None:
        return None
    fields = _record(record)
    if fields is None or fields[_WHERE] != _PROCESSING:
        return None
    return LeasedTask(
        taskid, fields[_URL], fields[_OWNER], float(fields[_WHEN]), int(fields[_RETRIED])
    )
