"""The Redis frontier's public face: a module of its own, apart from ``skitter.frontier``,
so that importing the frontier package never loads redis-py (a crawl that keeps its
state in memory or SQLite does not need it). Workers, ``skitter job``/``push``, the
dashboard's cluster view and the agent import it from here."""

from skitter.frontier._redis import (
    BadEntry,
    LeasedTask,
    QueueKind,
    RedisFrontier,
    ShardedRedisFrontier,
)

__all__ = [
    "BadEntry",
    "LeasedTask",
    "QueueKind",
    "RedisFrontier",
    "ShardedRedisFrontier",
]
