"""Reading the Lua scripts' stored values back in Python, for ``task()`` and inspection.

The layouts are written by ``lua/_common.lua`` (record fields, the packed outcome in the
``done`` hash, the ``bad`` hash's values); this module is their only Python reader, so a
change of layout touches these two files together.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from skitter.frontier._base import TaskInfo, TaskState

__all__ = ["BadEntry", "LeasedTask", "leased_task", "parse_bad", "task_info"]

# Fields of a task record (0-based here; 1-based in Lua).
_RETRIED = 2
_WHEN = 4
_OWNER = 5
_REASON = 7
_URL = 11
_NFIELDS = 12

_decode = msgspec.msgpack.Decoder().decode


def _finished(raw: bytes) -> tuple[TaskState, float, int, str, str] | None:
    """state, lastcrawltime, retried, reason, url of a ``done`` value."""
    if raw[:1] and 0x90 <= raw[0] <= 0x9F:
        try:
            state, last, _itag, retried, reason, url, *_rest = _decode(raw)
            return TaskState(state), float(last), int(retried), str(reason), str(url)
        except (msgspec.DecodeError, ValueError, TypeError):
            return None
    try:
        return TaskState.SUCCESS, float(raw), 0, "", ""
    except ValueError:
        return None


def task_info(taskid: str, record: bytes | None, done: bytes | None) -> TaskInfo | None:
    """What the ``tasks`` and ``done`` hashes say of ``taskid`` (as ``MemoryTaskQueue.task``)."""
    finished = _finished(done) if done is not None else None
    if record is not None:
        last = finished[1] if finished is not None else 0.0
        try:
            fields = _decode(record)
            if not isinstance(fields, list) or len(fields) != _NFIELDS:
                raise TypeError("not a task record")
            retried, reason, url = int(fields[_RETRIED]), str(fields[_REASON]), str(fields[_URL])
        except (msgspec.DecodeError, ValueError, TypeError):
            return TaskInfo(taskid, "", TaskState.ACTIVE, 0, last, "unreadable task record")
        return TaskInfo(taskid, url, TaskState.ACTIVE, retried, last, reason)
    if finished is None:
        return None
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
    return BadEntry(key, time, reason, raw)


@dataclass(frozen=True, slots=True)
class LeasedTask:
    """A task in flight somewhere in the cluster: which worker holds it, until when."""

    taskid: str
    url: str
    owner: str
    deadline: float
    retried: int


def leased_task(taskid: str, record: bytes | None) -> LeasedTask | None:
    """The lease recorded in a task record, or None if there is none (or it is unreadable)."""
    if record is None:
        return None
    try:
        fields = _decode(record)
        if not isinstance(fields, list) or len(fields) != _NFIELDS:
            return None
        return LeasedTask(
            taskid,
            str(fields[_URL]),
            str(fields[_OWNER]),
            float(fields[_WHEN]),
            int(fields[_RETRIED]),
        )
    except (msgspec.DecodeError, ValueError, TypeError):
        return None
