"""Frontiers: durable task stores with leases.

``Frontier`` is the contract every backend keeps; ``MemoryFrontier`` is the in-process
backend, ``MemoryTaskQueue`` its synchronous core (with ``TaskView``, the public view of
a task that persistence adapters observe and restore), ``SqliteFrontier`` the durable
embedded one: a ``JobStore``, the persistence seam of a job directory (``JobCounts``
and ``ResumeReport`` describe what it holds). ``SqliteFrontier`` is imported on first use,
so that a crawl without a job directory never loads it nor ``sqlite3``. ``RedisFrontier``
is imported on first use too (``from skitter.frontier import RedisFrontier``), so that a
crawl that keeps its state elsewhere never loads redis-py (part of the default install
all the same); it is left out of ``__all__`` for the same reason.
"""

from typing import TYPE_CHECKING, Any

from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._jobstore import JobCounts, JobStore, ResumeReport
from skitter.frontier._memory import MemoryFrontier, MemoryTaskQueue, TaskView

if TYPE_CHECKING:
    from skitter.frontier._sqlite import SqliteFrontier

__all__ = [
    "Frontier",
    "FrontierCounts",
    "JobCounts",
    "JobStore",
    "Lease",
    "MemoryFrontier",
    "MemoryTaskQueue",
    "PushOutcome",
    "ResumeReport",
    "SqliteFrontier",
    "TaskInfo",
    "TaskState",
    "TaskView",
]


def __getattr__(name: str) -> Any:
    if name == "SqliteFrontier":
        from skitter.frontier._sqlite import SqliteFrontier

        return SqliteFrontier
    if name == "RedisFrontier":
        from skitter.frontier._redis import RedisFrontier

        return RedisFrontier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
