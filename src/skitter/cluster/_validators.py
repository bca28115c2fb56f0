"""``RedisValidators``: the conditional recrawl's validators, shared by a job's workers.

ConditionalRecrawlMiddleware keeps, per taskid, the ETag and Last-Modified of a
recrawlable task's last success, and sends them when the task is crawled again. A task
is recrawled by whichever worker leases it, so in a distributed crawl they live in the
job's Redis (``JobKeys.validators``, one hash on shard 0, where the job's other shared
records are); the crawler hands this store to the middleware. The hash is cleared with
the job (REDIS_FLUSH_ON_START, the last worker out without REDIS_PERSIST): a new run of
a job must see every page whole.

A Redis error is never the crawl's: ``get`` answers "nothing known" (the page is
downloaded whole, which is always correct) and ``put`` gives up, each logged once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import orjson
from redis.exceptions import RedisError

from skitter._secrets import mask_text
from skitter.redis import JobKeys

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisValidators"]

log = logging.getLogger("skitter.cluster")


class RedisValidators:
    """taskid -> (ETag, Last-Modified), in the job's Redis."""

    def __init__(self, redis: Redis, keys: JobKeys) -> None:
        self.client = redis
        self.keys = keys
        self._failing = False

    def __repr__(self) -> str:
        return f"<RedisValidators {self.keys.validators}>"

    async def get(self, taskid: str) -> tuple[str | None, str | None] | None:
        try:
            raw = await self.client.hget(self.keys.validators, taskid)
        except (RedisError, OSError) as exc:
            self._failed("read", exc)
            return None
        self._failing = False
        if raw is None:
            return None
        try:
            etag, modified = orjson.loads(raw)
        except (orjson.JSONDecodeError, TypeError, ValueError):
            return None  # not what skitter writes: as good as nothing known
        return (
            etag if isinstance(etag, str) else None,
            modified if isinstance(modified, str) else None,
        )

    async def put(self, taskid: str, etag: str | None, modified: str | None) -> None:
        try:
            await self.client.hset(self.keys.validators, taskid, orjson.dumps([etag, modified]))
        except (RedisError, OSError) as exc:
            self._failed("write", exc)

    async def clear(self) -> None:
        await self.client.delete(self.keys.validators)

    def _failed(self, what: str, exc: BaseException) -> None:
        if not self._failing:
            why = mask_text(f"{type(exc).__name__}: {exc}")
            log.warning("Cannot %s recrawl validators in Redis; crawling whole: %s", what, why)
        self._failing = True
