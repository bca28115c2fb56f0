"""Frontiers: durable task stores with leases (SPEC §2, §4).

``Frontier`` is the contract every backend keeps; ``MemoryFrontier`` is the in-process
backend, ``MemoryTaskQueue`` its synchronous core, ``SqliteFrontier`` the durable embedded
one (a job directory; ``JobCounts`` and ``ResumeReport`` describe it). ``RedisFrontier``
is imported on first use (``from skitter.frontier import RedisFrontier``), so that a
crawl that keeps its state elsewhere never loads redis-py (part of the default install
all the same); it is left out of ``__all__`` for the same reason.
"""

from typing import Any

from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._memory import MemoryFrontier, MemoryTaskQueue
from skitter.frontier._sqlite import JobCounts, ResumeReport, SqliteFrontier

__all__ = [
    "Frontier",
    "FrontierCounts",
    "JobCounts",
    "Lease",
    "MemoryFrontier",
    "MemoryTaskQueue",
    "PushOutcome",
    "ResumeReport",
    "SqliteFrontier",
    "TaskInfo",
    "TaskState",
]


def __getattr__(name: str) -> Any:
    if name == "RedisFrontier":
        from skitter.frontier._redis import RedisFrontier

        return RedisFrontier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
