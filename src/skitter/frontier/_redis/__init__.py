"""The Redis frontier, on redis-py with hiredis (in the default install)."""

from skitter.frontier._redis._client import RedisTarget
from skitter.frontier._redis._frontier import QueueKind, RedisFrontier
from skitter.frontier._redis._keys import JobKeys
from skitter.frontier._redis._records import BadEntry, LeasedTask
from skitter.frontier._redis._sharded import ShardedRedisFrontier

__all__ = [
    "BadEntry",
    "JobKeys",
    "LeasedTask",
    "QueueKind",
    "RedisFrontier",
    "RedisTarget",
    "ShardedRedisFrontier",
]
