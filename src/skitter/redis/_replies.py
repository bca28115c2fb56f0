"""Typed reads for a client made with ``decode_responses=False``.

redis-py annotates each reply as a union of the sync and async forms, and of ``str`` and
``bytes``, because one class serves both clients in both decode modes. The frontier's
client never decodes, so its replies are bytes: these helpers say so once, instead of a
cast at every call that reads a reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["hgetall", "hmget", "zrange"]


async def zrange(
    client: Redis, key: str, start: int, stop: int, *, desc: bool = False
) -> list[bytes]:
    """Members of a sorted set by rank, ``start`` to ``stop`` inclusive."""
    return cast("list[bytes]", await client.zrange(key, start, stop, desc=desc))


async def hmget(client: Redis, key: str, fields: Sequence[bytes | str]) -> list[bytes | None]:
    """The values of ``fields`` in a hash, None for each that is missing."""
    return cast("list[bytes | None]", await client.hmget(key, list(fields)))


async def hgetall(client: Redis, key: str) -> dict[bytes, bytes]:
    """A whole hash."""
    return cast("dict[bytes, bytes]", await client.hgetall(key))
