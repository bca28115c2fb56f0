"""What the workers of one distributed crawl share besides the frontier.

Start requests are produced by one worker at a time: the first to claim them. The claim
is a lease (renewed while that worker feeds), and the number of start requests queued so
far is recorded in Redis after each one, so when the claimer dies another worker takes
the claim over and continues at that position; start requests re-queued around a crash
carry taskids from their position and merge with themselves, so none runs twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

from skitter._secrets import mask_text, mask_url
from skitter._tasks import cancel_and_wait
from skitter.exceptions import ConfigError, FrontierUnavailable
from skitter.settings import Settings

if TYPE_CHECKING:  # imported when a worker starts, so that `skitter crawl` never loads redis
    from redis.asyncio import Redis

    from skitter._presence import WorkerPresence
    from skitter.frontier import RedisFrontier
    from skitter.frontier._redis._keys import JobKeys
    from skitter.frontier._redis._politeness import RedisPoliteness
    from skitter.frontier._redis._stats import RedisStats

__all__ = ["ClusterJob", "StartClaim", "worker_id"]

log = logging.getLogger("skitter.cluster")


class StartClaim:
    """One job's start requests, fed by one worker at a time."""

    def __init__(self, redis: Redis, keys: JobKeys, owner: str, lease_seconds: float) -> None:
        self._redis = redis
        self._owner = owner
        self._lease_ms = max(1000, int(lease_seconds * 1000))
        prefix = f"{keys.meta.rsplit(':', 1)[0]}"
        self._claim = f"{prefix}:start-claim"
        self._progress = f"{prefix}:start"  # hash: offset, done

    async def wait_turn(self, poll: float = 1.0) -> int | None:
        """Block until this worker holds the claim (returns the offset to go on from) or
        the start requests are all queued (returns None). Redis unavailable (down, out
        of memory, read-only) is waited out; refused credentials raise a FatalError."""
        from skitter.frontier._redis._errors import redis_errors_translated

        while True:
            try:
                with redis_errors_translated("Redis (start claim)"):
                    done, offset = await self._redis.hmget(self._progress, "done", "offset")
                    if done:
                        return None
                    if await self._redis.set(self._claim, self._owner, nx=True, px=self._lease_ms):
                        start = int(offset or 0)
                        if start:
                            log.info("Taking over the start requests at position %d", start)
                        return start
            except FrontierUnavailable:
                pass
            await asyncio.sleep(poll)

    async def progress(self, offset: int) -> None:
        """Record how many start requests are queued, and renew the claim."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._progress, "offset", offset)
            pipe.pexpire(self._claim, self._lease_ms)
            await pipe.execute()

    async def finished(self) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._progress, "done", 1)
            pipe.delete(self._claim)
            await pipe.execute()

    async def clear(self) -> None:
        await self._redis.delete(self._claim, self._progress)


def worker_id() -> str:
    """This worker's name in leases and permits: host, process, and a random tag (a
    restarted worker is a new owner: its predecessor's leases are not its own)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class ClusterJob:
    """One worker's membership in a distributed crawl on Redis."""

    def __init__(self, redis_url: str, job: str) -> None:
        if not job:
            raise ConfigError("a distributed crawl needs a job name (--job NAME)")
        self.redis_url = redis_url
        self.job = job
        self.owner = worker_id()
        self.frontier: RedisFrontier | None = None
        self._stats: RedisStats | None = None
        self._stats_task: asyncio.Task[None] | None = None
        #: Heartbeats and the dashboard's control record (``_presence``).
        self._presence: WorkerPresence | None = None
        self._presence_task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<ClusterJob {self.job!r} on {mask_url(self.redis_url)}>"

    def make_frontier(self, spider: Any, settings: Settings) -> RedisFrontier:
        from skitter.frontier import RedisFrontier

        self.frontier = RedisFrontier(
            self.redis_url,
            project=spider.name,
            job=self.job,
            spider=spider,
            kind=settings["REDIS_QUEUE_KIND"],
            push_cache=settings["REDIS_PUSH_CACHE"],
            dupefilter=settings["REDIS_DUPEFILTER"],
            bloom_capacity=settings["REDIS_BLOOM_CAPACITY"],
            bloom_error_rate=settings["REDIS_BLOOM_ERROR_RATE"],
        )
        return self.frontier

    def politeness(self) -> Any:
        from skitter.frontier._redis._politeness import RedisPoliteness

        assert self.frontier is not None
        inner = RedisPoliteness(self.frontier.client, self.frontier.keys, owner=self.owner)
        return _Guarded(inner, f"Redis for {self.frontier.project}/{self.job} (politeness)")

    def stats(self) -> RedisStats:
        from skitter.frontier._redis._stats import RedisStats

        assert self.frontier is not None
        self._stats = RedisStats(self.frontier.client, self.frontier.keys)
        return self._stats

    async def totals(self) -> dict[str, Any]:
        assert self._stats is not None
        return await self._stats.totals()

    def start_claim(self, lease_seconds: float) -> StartClaim:
        assert self.frontier is not None
        return StartClaim(self.frontier.client, self.frontier.keys, self.owner, lease_seconds)

    async def open(self, project: Any, settings: Settings, crawler: Any = None) -> None:
        """Join the job; with ``crawler``, also publish heartbeats for it and apply the
        job's control record (rate, burst, pause set from ``skitter dashboard``)."""
        from skitter._presence import WorkerPresence
        from skitter.frontier._redis._control import JobControl
        from skitter.frontier._redis._errors import check_access

        frontier = self.frontier
        assert frontier is not None
        control = JobControl(frontier.client, frontier.keys)

        async def probe() -> None:  # read the job's keys through a script, write one
            await frontier.counts(0.0)
            await control.touch()

        # Refused credentials or rights stop the worker here, with one line, before its
        # feeds are opened; Redis out of reach is waited for, as later in the crawl.
        await check_access(frontier.client, self.redis_url, probe)
        log.info("Worker %s joining job %r on %s", self.owner, self.job, mask_url(self.redis_url))
        if settings["REDIS_FLUSH_ON_START"]:
            log.warning("REDIS_FLUSH_ON_START: clearing job %r", self.job)
            await self.frontier.drop()
            await project.start_claim.clear()
            await control.clear()
            if self._stats is not None:
                await self._stats.clear()
        if self._stats is not None:
            self._stats_task = asyncio.create_task(self._stats.run(), name="skitter-stats")
        if crawler is not None:
            self._presence = WorkerPresence(control, self.owner, crawler)
            await self._presence.beat()  # a pause or rate set beforehand holds from the start
            self._presence_task = asyncio.create_task(self._presence.run(), name="skitter-presence")

    async def close(self, settings: Settings) -> None:
        """Flush the stats once more; without REDIS_PERSIST, the last worker out clears
        the job's keys."""
        try:
            await self._close(settings)
        finally:
            if self.frontier is not None:
                # The engine closed the frontier (and its client) before this ran; what
                # was written since reconnected, so release those connections too.
                await self.frontier.client.aclose()

    async def _close(self, settings: Settings) -> None:
        for task in (self._stats_task, self._presence_task):
            if task is not None:
                await cancel_and_wait(task)
        self._stats_task = self._presence_task = None
        if self._presence is not None:
            await self._presence.beat()  # the last one says "done" (and counts the last tasks)
        if self._stats is not None:
            try:
                if self.frontier is not None:  # the Bloom filter's fill, for the record
                    for name, value in (await self.frontier.dupefilter_stats()).items():
                        self._stats.set(name, value)
                await self._stats.flush()
            except Exception as exc:  # Redis gone for good: the local stats are still printed
                log.warning("Could not write the final stats to Redis: %s", mask_text(str(exc)))
        frontier = self.frontier
        if frontier is None or settings["REDIS_PERSIST"]:
            return
        try:
            counts = await frontier.counts(0.0)
            if not (counts.ready or counts.delayed or counts.processing):
                await frontier.drop()
                await self.start_claim(1.0).clear()
                if self._stats is not None:  # a new run of the job counts from zero
                    await self._stats.clear()
                if self._presence is not None:  # a new run of the job starts unsteered
                    await self._presence.control.clear(roster=False)
        except Exception as exc:  # best effort on the way out
            log.warning("Could not clear job %r on exit: %s", self.job, mask_text(str(exc)))


class _Guarded:
    """Redis errors read here as they do from the frontier (``FrontierUnavailable`` for
    an outage, OOM or a read-only replica; ``FatalError`` for refused credentials), so
    the engine treats them the same way."""

    def __init__(self, inner: RedisPoliteness, where: str) -> None:
        from skitter.frontier._redis._errors import redis_errors_translated

        self._inner = inner
        self._where = where
        self._translated = redis_errors_translated

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)

        async def guarded(*args: Any, **kwargs: Any) -> Any:
            with self._translated(self._where):
                return await method(*args, **kwargs)

        return guarded
