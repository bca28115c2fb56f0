"""What the workers of one distributed crawl share besides the frontier.

Start requests are produced by one worker at a time: the first to claim them. The claim
is a lease (renewed while that worker feeds, and while it waits for the queue to
drain), fenced by a token: only its holder can record progress or renew it, so a
feeder whose claim lapsed (a long pause) can neither move the offset back nor keep
another worker's claim alive; it stops and waits for a turn again. The number of start
requests queued so far is recorded in Redis after each one, so when the claimer dies
another worker takes the claim over and continues at that position; start requests
re-queued around a crash carry taskids from their position and merge with themselves,
so none runs twice. Every claim script checks the job's epoch, as the frontier's do.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import time
import uuid
from typing import TYPE_CHECKING, Any

from skitter._secrets import mask_text, mask_url
from skitter._tasks import cancel_and_wait
from skitter.exceptions import ConfigError, FrontierOutage, FrontierUnavailable, JobStateLost
from skitter.settings import Settings

if TYPE_CHECKING:  # imported when a worker starts, so that `skitter crawl` never loads redis
    from skitter._presence import WorkerPresence
    from skitter.frontier import RedisFrontier
    from skitter.frontier._redis._politeness import RedisPoliteness
    from skitter.frontier._redis._stats import RedisStats

__all__ = ["ClusterJob", "StartClaim", "worker_id"]

log = logging.getLogger("skitter.cluster")

#: How long a job cleared by its last worker (REDIS_PERSIST off) keeps its epoch, so
#: that workers still finishing see a cleared job rather than a lost one.
CLEARED_JOB_TTL = 3600.0


class StartClaim:
    """One job's start requests, fed by one worker at a time."""

    def __init__(self, frontier: RedisFrontier, owner: str, lease_seconds: float) -> None:
        from skitter.frontier._redis._lua import register

        self._frontier = frontier
        self._owner = owner
        self._lease_ms = max(1000, int(lease_seconds * 1000))
        #: How often a feeder renews the claim while it waits for the queue to drain.
        self.renew_every = self._lease_ms / 3000
        keys = frontier.keys
        self._keys = [keys.meta, keys.start_claim, keys.start]
        self._claim = register(frontier.client, "start_claim")
        self._progress = register(frontier.client, "start_progress")
        self._prefix = f"{owner}.{uuid.uuid4().hex[:8]}."
        self._attempts = itertools.count()
        self._token: str | None = None

    async def _call(self, script: Any, args: list[Any]) -> int:
        """One claim script, with the frontier's reading of Redis's errors (``_errors``)."""
        from redis.exceptions import ResponseError

        from skitter.frontier._redis._errors import lost_error, redis_errors_translated

        frontier = self._frontier
        if frontier.epoch is None:
            await frontier.open_job()
        try:
            with redis_errors_translated("Redis (start requests)"):
                return int(await script(self._keys, [frontier.epoch, *args]))
        except ResponseError as exc:
            lost = lost_error(frontier, str(exc))
            if lost is not None:
                raise lost from None
            raise

    async def wait_turn(self, poll: float = 1.0) -> int | None:
        """Block until this worker holds the claim (returns the offset to go on from) or
        the start requests are all queued (returns None). Redis unavailable (down, out
        of memory, read-only) is waited out; refused credentials raise a FatalError, and
        ``JobStateLost`` says the job's state vanished meanwhile."""
        while True:
            token = f"{self._prefix}{next(self._attempts)}"
            try:
                answer = await self._call(self._claim, [token, self._lease_ms])
            except FrontierUnavailable:
                answer = -2  # try again later
            if answer == -1:
                return None
            if answer >= 0:
                self._token = token
                if answer:
                    log.info("Taking over the start requests at position %d", answer)
                return answer
            await asyncio.sleep(poll)

    async def progress(self, offset: int) -> bool:
        """Record how many start requests are queued, and renew the claim: False when
        this worker no longer holds it (it lapsed, another worker took it over; nothing
        changed)."""
        return await self._record(offset, done=False)

    async def finished(self, offset: int) -> bool:
        """Every start request is queued: record it and give the claim up (False, and
        nothing changes, if this worker no longer held it)."""
        return await self._record(offset, done=True)

    async def _record(self, offset: int, *, done: bool) -> bool:
        if self._token is None:
            return False
        args = [self._token, self._lease_ms, int(offset), "1" if done else "0"]
        kept = bool(await self._call(self._progress, args))
        if not kept or done:
            self._token = None
        return kept

    async def clear(self) -> None:
        keys = self._frontier.keys
        await self._frontier.client.delete(keys.start_claim, keys.start)


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

        try:
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
                bad_max=settings["REDIS_BAD_MAX"],
                create=True,  # a worker has the spider: it may start the job
            )
        except ValueError as exc:  # a REDIS_* setting it cannot work with
            raise ConfigError(f"worker settings: {exc}") from None
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
        self.frontier.stats = self._stats  # what it moves aside is counted
        return self._stats

    async def totals(self) -> dict[str, Any]:
        assert self._stats is not None
        return await self._stats.totals()

    def start_claim(self, lease_seconds: float) -> StartClaim:
        assert self.frontier is not None
        return StartClaim(self.frontier, self.owner, lease_seconds)

    async def open(self, project: Any, settings: Settings, crawler: Any = None) -> None:
        """Join the job; with ``crawler``, also publish heartbeats for it and apply the
        job's control record (rate, burst, pause set from ``skitter dashboard``)."""
        from skitter._presence import WorkerPresence
        from skitter.frontier._redis._control import JobControl
        from skitter.frontier._redis._errors import check_access

        frontier = self.frontier
        assert frontier is not None
        control = JobControl(frontier.client, frontier.keys)

        async def probe() -> None:  # read one of the job's keys, write another
            await frontier.client.hget(frontier.keys.meta, "epoch")  # joined below, not here
            await control.touch()

        # Refused credentials or rights stop the worker here, with one line, before its
        # feeds are opened; Redis out of reach is waited for, as later in the crawl.
        await check_access(frontier.client, self.redis_url, probe)
        log.info("Worker %s joining job %r on %s", self.owner, self.job, frontier.where)
        if settings["REDIS_FLUSH_ON_START"]:
            log.warning("REDIS_FLUSH_ON_START: clearing job %r (it gets a new epoch)", self.job)
            await frontier.drop()
            await project.start_claim.clear()
            await control.clear()
            if self._stats is not None:
                await self._stats.clear()
        await self._join(frontier, settings["FRONTIER_OUTAGE_TIMEOUT"])
        if self._stats is not None:
            self._stats_task = asyncio.create_task(self._stats.run(), name="skitter-stats")
        if crawler is not None:
            self._presence = WorkerPresence(control, self.owner, crawler)
            await self._presence.beat()  # a pause or rate set beforehand holds from the start
            self._presence_task = asyncio.create_task(self._presence.run(), name="skitter-presence")

    async def _join(self, frontier: RedisFrontier, outage_timeout: float) -> None:
        """Join the job (creating it if it does not exist yet) and say which: a Redis
        that is not up yet is waited for as the engine waits out an outage."""
        started = time.monotonic()
        delay = 0.5
        created = False
        while True:
            try:
                created = await frontier.open_job(create=True) or created
                counts = await frontier.counts(time.time())
                break
            except FrontierUnavailable as exc:
                waited = time.monotonic() - started
                if outage_timeout > 0 and waited >= outage_timeout:
                    raise FrontierOutage(
                        f"cannot join job {self.job!r}: Redis has been unavailable for "
                        f"{waited:.0f} s (FRONTIER_OUTAGE_TIMEOUT is {outage_timeout:g} s): {exc}"
                    ) from exc
                if delay == 0.5:
                    log.warning("Cannot reach Redis to join job %r, waiting: %s", self.job, exc)
                await asyncio.sleep(delay)
                delay = min(5.0, delay * 2)
        if created:
            log.info("Created job %r (epoch %s)", self.job, frontier.epoch)
            return
        log.info(
            "Joined job %r (epoch %s%s, %d queued, %d in flight)",
            self.job,
            frontier.epoch,
            ", made by an older skitter" if frontier.opened == "adopted" else "",
            counts.queued,
            counts.processing,
        )

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
                await frontier.drop(keep_epoch=CLEARED_JOB_TTL)
                await self.start_claim(1.0).clear()
                if self._stats is not None:  # a new run of the job counts from zero
                    await self._stats.clear()
                if self._presence is not None:  # a new run of the job starts unsteered
                    await self._presence.control.clear(roster=False)
        except JobStateLost:
            pass  # nothing left to clear; the crawl has failed and said why
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
