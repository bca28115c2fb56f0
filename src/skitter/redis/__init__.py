"""Redis, the layer under every part of skitter that talks to it: the frontier's Redis
backend, the cluster's shared state, ``skitter job`` and ``push``, the dashboard's
cluster view and the Redis pipelines and sinks.

What they share lives here once, below both frontier and cluster: making a client for a
single node, a Redis Cluster or a Sentinel set (``RedisTarget``, ``bytes_client``);
reading Redis's errors as skitter's (``classify``, ``translate``, ``translating``...);
the key schema of a job (``JobKeys``); the loader of the Lua scripts and the preludes
they share (``register``, ``script_text``: one clock rule and one token-bucket rule for
every script); replicated writes (``replicated``, ``replica_wait``) and typed replies.
Importing it loads redis-py, which a crawl that keeps its state elsewhere never does.
"""

from skitter.redis._client import RedisTarget, bytes_client, describe, replica_wait
from skitter.redis._errors import (
    REDIS_ERRORS,
    check_access,
    classify,
    lost_error,
    reason_kind,
    redis_errors_translated,
    translate,
    translated,
    translating,
)
from skitter.redis._keys import JobKeys
from skitter.redis._lua import TimeSource, check_time_source, lua_number, register, script_text
from skitter.redis._replicated import ReplicaWait, replicated
from skitter.redis._replies import hgetall, hmget, zrange

__all__ = [
    "REDIS_ERRORS",
    "JobKeys",
    "RedisTarget",
    "ReplicaWait",
    "TimeSource",
    "bytes_client",
    "check_access",
    "check_time_source",
    "classify",
    "describe",
    "hgetall",
    "hmget",
    "lost_error",
    "lua_number",
    "reason_kind",
    "redis_errors_translated",
    "register",
    "replica_wait",
    "replicated",
    "script_text",
    "translate",
    "translated",
    "translating",
    "zrange",
]
