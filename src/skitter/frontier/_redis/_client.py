"""The frontier's Redis client: made from a URL, or checked when the caller brings one."""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from skitter.exceptions import ConfigError

__all__ = ["bytes_client", "describe"]


def _retry() -> Retry:
    """Resend a command whose connection broke, a few times over about a second.

    After a Redis restart the pooled connections are dead and the first command on each
    fails; resending it on a fresh connection is what makes a restart invisible. Every
    script is safe to run twice if its first reply was lost: a push merges into itself, a
    lost lease expires and is reclaimed, a second ack finds no lease and answers False.
    Longer outages are for the worker to ride out (pause, back off, try again). A restart
    that lost the job's state is not invisible: the epoch is gone (``JobStateLost``).
    """
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)


def bytes_client(redis: str | Redis) -> tuple[Redis, bool]:
    """A client that answers bytes, and whether the frontier owns (and closes) it: one
    it made from a URL, with a short retry on broken connections; or the caller's,
    which must not decode replies (the frontier stores bytes)."""
    if isinstance(redis, str):
        return Redis.from_url(redis, retry=_retry()), True
    if redis.connection_pool.connection_kwargs.get("decode_responses"):
        raise ConfigError(
            "the Redis frontier stores bytes: create its client with decode_responses=False"
        )
    return redis, False


def describe(client: Redis) -> str:
    """``redis://host:port/db`` of a client (never with credentials), for messages."""
    kwargs = client.connection_pool.connection_kwargs
    db = kwargs.get("db", 0)
    if "path" in kwargs:
        return f"unix://{kwargs['path']}?db={db}"
    return f"redis://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{db}"
