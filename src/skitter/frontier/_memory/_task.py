"""Task keys, the checks a request passes before it is queued, and ``TaskView``.

These are the memory queue's public vocabulary, shared with the backends built on it:
the SQLite adapter keys its dirty set by ``TaskKey`` and writes rows from ``TaskView``;
the Redis frontier checks requests with ``check_request``.
"""

from __future__ import annotations

from typing import NamedTuple

from skitter.frontier._base import TaskState
from skitter.http import Request

__all__ = [
    "MAX_PRIORITY",
    "TaskKey",
    "TaskView",
    "check_request",
    "priority_of",
    "request_key",
    "task_key",
    "taskid_of",
]

#: A task's dictionary key: the 20 bytes of a SHA-1 hex taskid (a fingerprint), else the
#: taskid itself. Bytes hash and compare faster than 40-character strings, and weigh less.
TaskKey = bytes | str


def task_key(taskid: str) -> TaskKey:
    """The dictionary key of ``taskid``: the 20 bytes of a lower-case SHA-1 hex, else
    the string itself."""
    if len(taskid) == 40:
        try:
            raw = bytes.fromhex(taskid)
        except ValueError:
            return taskid
        if raw.hex() == taskid:
            return raw
    return taskid


def request_key(request: Request) -> TaskKey:
    """The key of the task ``request`` is queued under: its explicit taskid's, else its
    fingerprint (already computed and cached on the request)."""
    if request.has_explicit_taskid:
        return task_key(request.taskid)
    return request.fingerprint


def taskid_of(key: TaskKey) -> str:
    """The taskid a key stands for (``task_key``'s inverse)."""
    return key.hex() if isinstance(key, bytes) else key


#: Priorities are below it in magnitude, in every frontier: the Redis one keeps them in
#: doubles, the memory one in sort keys of a fixed width.
MAX_PRIORITY = 2**53


def priority_of(request: Request) -> int:
    """``request.priority`` as the int the queue orders by; TypeError naming the request
    if it is not a whole number, ValueError if it is not below ``MAX_PRIORITY`` in
    magnitude."""
    priority = request.priority
    if isinstance(priority, int) or (isinstance(priority, float) and priority.is_integer()):
        priority = int(priority)
        if -MAX_PRIORITY < priority < MAX_PRIORITY:
            return priority
        raise ValueError(f"priority of {request!r} is out of range (below 2**53): {priority}")
    raise TypeError(f"priority of {request!r} must be an int, got {priority!r}")


def check_request(request: Request) -> TaskKey:
    """Raise, naming the request, if it cannot be queued: InvalidURL when its URL cannot
    be fingerprinted, TypeError for a priority, exetime or age that is not a number.
    Returns the key the task is queued under (``request_key``).

    Batch pushes call it for every request first, so a bad one changes nothing.
    """
    key = task_key(request.taskid) if request.has_explicit_taskid else request.fingerprint
    priority = request.priority
    if priority.__class__ is not int or not -MAX_PRIORITY < priority < MAX_PRIORITY:
        priority_of(request)  # raises, or accepts an integral float
    # Decided cheaply for the usual float or int (once per link a page yields); bools
    # and others are checked in full.
    exetime, age = request.exetime, request.age
    if exetime.__class__ is not float and exetime.__class__ is not int:
        _check_number(request, "exetime", exetime)
    if age.__class__ is not float and age.__class__ is not int:
        _check_number(request, "age", age)
    return key


def _check_number(request: Request, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} of {request!r} must be a number, got {value!r}")


class TaskView(NamedTuple):
    """One task as the queue holds it now (``MemoryTaskQueue.view``): everything a
    persistence adapter stores of it.

    A queued or processing task (ACTIVE) has its ``request`` and its place in the queue
    (``priority``, then ``seq``, the order of first push). A finished one has neither:
    the queue forgets them to stay small, so an adapter that must write them (a task
    queued and finished between two writes) records them when the task is queued."""

    taskid: str
    state: TaskState
    request: Request | None  # the queued request itself (not a copy); None once finished
    priority: int | None  # None once finished
    seq: int | None  # None once finished
    exetime: float  # when a delayed task is due; 0.0 once due, processing or finished
    deadline: float | None  # the lease deadline while processing, else None
    owner: str  # who holds the lease while processing, else ""
    retried: int  # failed attempts so far
    lastcrawltime: float  # when it last finished (0.0: never)
    reason: str  # why it last failed ("" if it has not, or succeeded since)
    itag: str | None
    url: str  # "" for a succeeded task: its URL is not kept
