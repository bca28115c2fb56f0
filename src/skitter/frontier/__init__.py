"""Frontiers: durable task stores with leases (SPEC §2, §4).

``Frontier`` is the contract every backend keeps; ``MemoryFrontier`` is the in-process
backend, ``MemoryTaskQueue`` its synchronous core.
"""

from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._memory import MemoryFrontier, MemoryTaskQueue

__all__ = [
    "Frontier",
    "FrontierCounts",
    "Lease",
    "MemoryFrontier",
    "MemoryTaskQueue",
    "PushOutcome",
    "TaskInfo",
    "TaskState",
]
