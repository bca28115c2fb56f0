"""The Redis frontier, on redis-py with hiredis (in the default install); the client, key
schema, errors and Lua loader it shares with the cluster are ``skitter.redis``'s."""

from skitter.frontier._redis._frontier import QueueKind, RedisFrontier
from skitter.frontier._redis._records import BadEntry, LeasedTask
from skitter.frontier._redis._sharded import ShardedRedisFrontier

__all__ = [
    "BadEntry",
    "LeasedTask",
    "QueueKind",
    "RedisFrontier",
    "ShardedRedisFrontier",
]
