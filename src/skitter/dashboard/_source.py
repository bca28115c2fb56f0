"""``ClusterSource``: the jobs of a distributed crawl, found in Redis and kept fresh.

It is the list of projects a ``Dashboard`` shows for ``skitter dashboard --redis``: a
live ``Sequence`` of ``ClusterProject``, one per job, that grows as jobs appear::

    async with ClusterSource("redis://127.0.0.1:6379/0") as jobs:
        async with Dashboard(jobs, clock=jobs.clock.time) as ui:
            print("dashboard at", ui.url)
            await asyncio.Event().wait()

**Finding jobs.** Every job has a ``P:meta`` hash once something was queued, and a
``P:workers`` roster once a worker started; SCAN finds both (only those of the ``jobs``
named, if any). A SCAN walks the whole keyspace, which a large crawl makes long (a key
per slot, per Bloom block), so it runs every ``rescan`` seconds at most and never more
often than ten times its own duration. A job whose keys are all gone leaves the list.

**Sampling.** Each job is read once a second (``interval``): totals, control record,
roster, queue counts and leases, a few round trips. The windowed counts and the pages/s
chart are built from these samples (see ``_cluster``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Self, overload

from redis.asyncio import Redis

from skitter._clock import Clock, SystemClock
from skitter._secrets import mask_text
from skitter._tasks import Background, Health, periodic
from skitter.dashboard._cluster import ClusterProject
from skitter.exceptions import ConfigError, FatalError, FrontierUnavailable, SkitterError
from skitter.redis import REDIS_ERRORS, JobKeys, RedisTarget, redis_errors_translated

__all__ = ["ClusterSource"]

#: What a failed Redis call raises here.
_READ_ERRORS: tuple[type[Exception], ...] = (SkitterError, *REDIS_ERRORS, OSError)

log = logging.getLogger("skitter.dashboard")

#: The keys a job is found by: its frontier's meta hash, its roster of workers.
_FOUND_BY = ("meta", "workers")


class ClusterSource(Sequence[ClusterProject]):
    """The jobs on ``redis`` (a URL or a ``RedisTarget``: all jobs, or those named in
    ``jobs``), sorted by name."""

    def __init__(
        self,
        redis: str | RedisTarget,
        jobs: Sequence[str] = (),
        *,
        prefix: str = "skitter",
        interval: float = 1.0,
        rescan: float = 5.0,
        clock: Clock | None = None,
    ) -> None:
        if not prefix or any(c in prefix for c in "{}"):
            raise ConfigError(f"the key prefix must be non-empty without braces, got {prefix!r}")
        self.target = RedisTarget.of(redis)
        self.redis_url = self.target.url
        self.jobs = tuple(jobs)
        self.prefix = prefix
        self.interval = interval
        self.rescan = rescan
        self.clock: Clock = clock or SystemClock()
        self.client: Redis | None = None
        self._projects: list[ClusterProject] = []
        self._task = Background("skitter-cluster-source")
        self._next_scan = 0.0
        self._failing = False

    # -- Sequence -----------------------------------------------------------------------------
    @overload
    def __getitem__(self, index: int) -> ClusterProject: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ClusterProject]: ...
    def __getitem__(self, index: int | slice) -> ClusterProject | Sequence[ClusterProject]:
        return self._projects[index]

    def __len__(self) -> int:
        return len(self._projects)

    def __iter__(self) -> Iterator[ClusterProject]:
        return iter(list(self._projects))

    # -- lifetime -----------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, find the jobs and read them once; then keep them fresh. A Redis that
        cannot be reached, or that refuses the credentials, is a ConfigError (the
        command's mistake, not the crawl's), its message naming the URL masked."""
        if self.client is not None:
            raise RuntimeError("the cluster source is already started")
        self.client = self.target.client()
        where = f"Redis at {self.target}"
        try:
            with redis_errors_translated(where):
                await self.client.ping()
                await self.update()
        except _READ_ERRORS as exc:
            await self.client.aclose()
            self.client = None
            if isinstance(exc, FrontierUnavailable | FatalError):
                raise ConfigError(str(exc)) from None
            raise ConfigError(f"cannot read the jobs from {where}: {mask_text(str(exc))}") from None
        self._task.start(periodic(self.interval, self._refresh))

    async def stop(self) -> None:
        await self._task.stop()
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # -- work ---------------------------------------------------------------------------------
    def health(self) -> Health:
        """Whether the jobs are kept fresh (a Redis outage is waited out, not a failure)."""
        return self._task.health()

    async def _refresh(self) -> None:
        try:
            await self.update()
        except _READ_ERRORS as exc:
            if not self._failing:
                log.warning("Cannot read the jobs from Redis, will retry: %s", mask_text(str(exc)))
            self._failing = True
        else:
            if self._failing:
                log.info("Reading the jobs from Redis again")
            self._failing = False

    async def update(self) -> None:
        """Find jobs if a scan is due, then read every job once."""
        if self.clock.monotonic() >= self._next_scan:
            started = self.clock.monotonic()
            await self.discover()
            took = self.clock.monotonic() - started
            self._next_scan = self.clock.monotonic() + max(self.rescan, 10 * took)
        for project in list(self._projects):
            await project.refresh()

    async def discover(self) -> None:
        """SCAN for the jobs' keys; add the new jobs, drop the vanished ones."""
        client = self._require_client()
        found: dict[tuple[str, str], None] = {}
        for name in _FOUND_BY:
            for job in self.jobs or [None]:
                pattern = JobKeys.pattern(name, job, self.prefix)
                async for key in client.scan_iter(match=pattern, count=1000):
                    parsed = JobKeys.parse(key, self.prefix, name=name)
                    if parsed is not None and (job is None or parsed[1] == job):
                        found[parsed] = None
        known = {(p.project, p.job): p for p in self._projects}
        projects = []
        for project, job in found:
            existing = known.get((project, job))
            if existing is None:
                existing = ClusterProject(
                    client, project, job, clock=self.clock, prefix=self.prefix
                )
                await existing.refresh()
            projects.append(existing)
        projects.sort(key=lambda p: p.name)
        self._projects = projects

    def _require_client(self) -> Redis:
        if self.client is None:
            raise RuntimeError("the cluster source is not started")
        return self.client
