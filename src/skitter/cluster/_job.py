"""``ClusterJob``: one worker's membership in a distributed crawl on Redis.

The crawler (the composition root) asks it for what a worker runs on instead of the
local parts: the job's ``ShardedRedisFrontier``, the scheduler's ``ClusterGate`` (the job's
shared token bucket and slot permits), the downloader's robots.txt cache
(``RedisRobotsCache``), recrawl validators (``RedisValidators``) and session pool
(``RedisSessions``), ``RedisStats``
(this worker's counts, added to the job's totals), the ``StartClaim`` (start requests
fed by one worker at a time).
``open`` joins the job (creating it if needed) and starts the heartbeats
(``WorkerPresence``); ``close`` flushes the stats once more and, without REDIS_PERSIST,
lets the last worker out clear the job's keys.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from typing import Any

from skitter._clock import Clock
from skitter._secrets import mask_text, mask_url
from skitter._tasks import Background
from skitter._types import StatsSink
from skitter.cluster._control import JobControl
from skitter.cluster._gate import ClusterGate
from skitter.cluster._politeness import RedisPoliteness
from skitter.cluster._presence import Steered, WorkerPresence
from skitter.cluster._robots import RedisRobotsCache
from skitter.cluster._sessions import RedisSessions
from skitter.cluster._start_claim import StartClaim
from skitter.cluster._stats import LocalStats, RedisStats
from skitter.cluster._validators import RedisValidators
from skitter.exceptions import ConfigError, FrontierOutage, FrontierUnavailable, JobStateLost
from skitter.frontier.redis import ShardedRedisFrontier
from skitter.redis import RedisTarget, TimeSource, check_access, check_time_source
from skitter.settings import ClusterSettings, SchedulerSettings, Settings

__all__ = ["ClusterJob", "worker_id"]

log = logging.getLogger("skitter.cluster")

#: How long a job cleared by its last worker (REDIS_PERSIST off) keeps its epoch, so
#: that workers still finishing see a cleared job rather than a lost one.
CLEARED_JOB_TTL = 3600.0


def worker_id() -> str:
    """This worker's name in leases and permits: host, process, and a random tag (a
    restarted worker is a new owner: its predecessor's leases are not its own)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class ClusterJob:
    """One worker's membership in a distributed crawl on Redis.

    ``time_source`` is whose clock the job's scripts decide by: Redis's own (``"redis"``,
    every real worker), or the caller's (``"caller"``: workers in one test process on
    virtual time, whose leases, permits and tokens must follow that time)."""

    def __init__(self, redis_url: str, job: str, *, time_source: TimeSource = "redis") -> None:
        if not job:
            raise ConfigError("a distributed crawl needs a job name (--job NAME)")
        self.redis_url = redis_url
        self.job = job
        self.time_source = check_time_source(time_source)
        self.owner = worker_id()
        self.frontier: ShardedRedisFrontier | None = None
        self._stats: RedisStats | None = None
        self._stats_task = Background("skitter-stats")
        #: Heartbeats and the dashboard's control record (``_presence``).
        self._presence: WorkerPresence | None = None
        self._presence_task = Background("skitter-presence")

    def __repr__(self) -> str:
        return f"<ClusterJob {self.job!r} on {mask_url(self.redis_url)}>"

    def make_frontier(self, spider: Any, settings: Settings) -> ShardedRedisFrontier:
        own = settings.view(ClusterSettings)
        try:
            self.frontier = ShardedRedisFrontier(
                RedisTarget.from_settings(self.redis_url, settings),
                project=spider.name,
                job=self.job,
                spider=spider,
                kind=own.redis_queue_kind,
                push_cache=own.redis_push_cache,
                dupefilter=own.redis_dupefilter,
                bloom_capacity=own.redis_bloom_capacity,
                bloom_error_rate=own.redis_bloom_error_rate,
                bad_max=own.redis_bad_max,
                shards=own.redis_shards,
                create=True,  # a worker has the spider: it may start the job
                time_source=self.time_source,
            )
        except ValueError as exc:  # a REDIS_* setting it cannot work with
            raise ConfigError(f"worker settings: {exc}") from None
        return self.frontier

    def compose(
        self, crawler: Any, spider: Any, lease_seconds: float
    ) -> tuple[ShardedRedisFrontier, ClusterGate]:
        """The worker's frontier and gate; ``crawler`` (the composition root) gets the
        job's stats and the stores its components share with the other workers."""
        settings = crawler.settings
        frontier = self.make_frontier(spider, settings)
        # Count into Redis too (before any component takes the stats object), so the
        # job's totals add up over every worker.
        crawler.stats = self.stats(crawler.stats)
        crawler.signals.stats = crawler.stats
        crawler.robots_cache = self.robots_cache()
        crawler.recrawl_validators = self.validators()
        crawler.session_store = self.sessions()
        own = settings.view(ClusterSettings)
        limits = (own.max_rate, own.max_burst)
        gate = self.gate(crawler.clock, crawler.stats, lease_seconds, limits=limits)
        return frontier, gate

    def sessions(self) -> RedisSessions:
        """SessionMiddleware's pool, shared by every worker (unused without sessions)."""
        assert self.frontier is not None
        return RedisSessions(self.frontier.client, self.frontier.keys)

    def politeness(self) -> RedisPoliteness:
        """The job's slot permits and token bucket, shared by every worker."""
        assert self.frontier is not None
        return RedisPoliteness(
            self.frontier.client, self.frontier.keys, owner=self.owner, time_source=self.time_source
        )

    def robots_cache(self) -> RedisRobotsCache:
        """robots.txt fetched once per origin for the job (RobotsTxtMiddleware's cache)."""
        assert self.frontier is not None
        return RedisRobotsCache(self.frontier.client, self.frontier.keys)

    def validators(self) -> RedisValidators:
        """The conditional recrawl's validators for the job (ConditionalRecrawlMiddleware's)."""
        assert self.frontier is not None
        return RedisValidators(self.frontier.client, self.frontier.keys)

    def gate(
        self,
        clock: Clock,
        stats: StatsSink,
        lease_seconds: float,
        *,
        limits: tuple[float | None, float | None] = (None, None),
    ) -> ClusterGate:
        """The scheduler's gate: the job's token bucket and slot permits (``limits``:
        this worker's MAX_RATE and MAX_BURST, beyond which it keeps its own rate)."""
        return ClusterGate(
            self.politeness(),
            clock=clock,
            stats=stats,
            lease_seconds=lease_seconds,
            limits=limits,
        )

    def stats(self, local: LocalStats) -> RedisStats:
        """This worker's stats (kept in ``local``), also added to the job's totals."""
        assert self.frontier is not None
        self._stats = RedisStats(self.frontier.client, self.frontier.keys, local)
        self.frontier.stats = self._stats  # what it moves aside is counted
        return self._stats

    async def totals(self) -> dict[str, Any]:
        assert self._stats is not None
        return await self._stats.totals()

    def start_claim(self, lease_seconds: float) -> StartClaim:
        assert self.frontier is not None
        return StartClaim(self.frontier, self.owner, lease_seconds)

    async def open(self, project: Any, settings: Settings, control: Steered | None = None) -> None:
        """Join the job; with ``control`` (the project's ``ProjectControl``), also
        publish heartbeats for it and apply the job's control record to it (rate, burst,
        pause set from ``skitter dashboard``)."""
        frontier = self.frontier
        assert frontier is not None
        job_control = JobControl(frontier.client, frontier.keys)

        async def probe() -> None:  # read one of the job's keys, write another
            await frontier.client.hget(frontier.keys.meta, "epoch")  # joined below, not here
            await job_control.touch()

        # Refused credentials or rights stop the worker here, with one line, before its
        # feeds are opened; Redis out of reach is waited for, as later in the crawl.
        await check_access(frontier.client, self.redis_url, probe)
        log.info("Worker %s joining job %r on %s", self.owner, self.job, frontier.where)
        if settings.view(ClusterSettings).redis_flush_on_start:
            log.warning("REDIS_FLUSH_ON_START: clearing job %r (it gets a new epoch)", self.job)
            await frontier.drop()
            await project.start_claim.clear()
            await job_control.clear()
            await self.politeness().clear()  # breakers, back-offs, robots.txt of the last run
            await self.validators().clear()  # a new run sees every page whole
            await self.sessions().clear()  # and starts with no session (nor cookie)
            if self._stats is not None:
                await self._stats.clear()
        outage = settings.view(SchedulerSettings).frontier_outage_timeout
        await self._join(frontier, outage, project.clock)
        if self._stats is not None:
            self._stats_task.start(self._stats.run())
        if control is not None:
            self._presence = WorkerPresence(job_control, self.owner, control)
            control.share_rate(self._presence.share_rate)  # its UI steers the whole job
            await self._presence.beat()  # a pause or rate set beforehand holds from the start
            self._presence_task.start(self._presence.run())

    async def _join(
        self, frontier: ShardedRedisFrontier, outage_timeout: float, clock: Clock
    ) -> None:
        """Join the job (creating it if it does not exist yet) and say which: a Redis
        that is not up yet is waited for as the engine waits out an outage."""
        started = clock.monotonic()
        delay = 0.5
        created = False
        while True:
            try:
                created = await frontier.open_job(create=True, now=clock.time()) or created
                counts = await frontier.counts(clock.time())
                break
            except FrontierUnavailable as exc:
                waited = clock.monotonic() - started
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
        await self._stats_task.stop()
        await self._presence_task.stop()
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
        if frontier is None or settings.view(ClusterSettings).redis_persist:
            return
        try:
            counts = await frontier.counts(0.0)
            if not (counts.ready or counts.delayed or counts.processing):
                await frontier.drop(keep_epoch=CLEARED_JOB_TTL)
                await self.start_claim(1.0).retire(CLEARED_JOB_TTL)
                await self.politeness().clear()  # a new run reads robots.txt afresh
                await self.validators().clear()  # and every page whole
                await self.sessions().clear()  # with no session (nor cookie) of this run
                if self._stats is not None:  # a new run of the job counts from zero
                    await self._stats.clear()
                if self._presence is not None:  # a new run of the job starts unsteered
                    await self._presence.control.clear(roster=False)
        except JobStateLost:
            pass  # nothing left to clear; the crawl has failed and said why
        except Exception as exc:  # best effort on the way out
            log.warning("Could not clear job %r on exit: %s", self.job, mask_text(str(exc)))
