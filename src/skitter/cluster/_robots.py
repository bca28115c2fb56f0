"""``RedisRobotsCache``: robots.txt fetched once per origin for a whole job.

Alone, each of N workers fetches every host's robots.txt: N requests a site counts
against us, and N answers that may differ. The downloader's ``RobotsTxtMiddleware``
takes a ``RobotsCache`` from the composition root (the crawler); this is the job's, in
Redis: one key per origin (``JobKeys.robots``) holding its text with its expiry.
``claim`` is one script call (``robots_claim.lua``): the cached text, or the claim to
fetch it, which lapses after ``lease`` seconds if that worker dies. A Redis error is
never the crawl's: ``claim`` answers "mine" (fetch it yourself) and ``put`` gives up,
each logged once, as a worker alone would behave.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from redis.exceptions import RedisError

from skitter._secrets import mask_text
from skitter.redis import JobKeys, register

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisRobotsCache"]

log = logging.getLogger("skitter.cluster")

_State = Literal["cached", "mine", "busy"]


class RedisRobotsCache:
    """robots.txt of every origin the job's workers crawl, shared in Redis."""

    def __init__(self, redis: Redis, keys: JobKeys, *, lease: float = 30.0) -> None:
        if not lease > 0:
            raise ValueError(f"lease must be > 0, got {lease!r}")
        self.client = redis
        self.keys = keys
        self._lease_ms = int(lease * 1000)
        self._claim = register(redis, "robots_claim", package="skitter.cluster")
        self._failing = False

    def __repr__(self) -> str:
        return f"<RedisRobotsCache {self.keys.tag}>"

    async def claim(self, origin: str) -> tuple[_State, str | None]:
        try:
            raw = await self._claim([self.keys.robots(origin)], [self._lease_ms])
        except (RedisError, OSError) as exc:
            self._failed("read", exc)
            return "mine", None
        self._failing = False
        value = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
        if value == "":
            return "mine", None
        if value == "?":
            return "busy", None
        if value.startswith("="):
            return "cached", value[1:]
        return "cached", None  # "-": no rules

    async def put(self, origin: str, text: str | None, ttl: float) -> None:
        value = "-" if text is None else "=" + text
        try:
            await self.client.set(self.keys.robots(origin), value, px=max(1, int(ttl * 1000)))
        except (RedisError, OSError) as exc:
            self._failed("write", exc)

    def _failed(self, what: str, exc: BaseException) -> None:
        if not self._failing:
            why = mask_text(f"{type(exc).__name__}: {exc}")
            log.warning("Cannot %s robots.txt in Redis; fetching it here: %s", what, why)
        self._failing = True
