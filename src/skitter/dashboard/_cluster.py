"""One job of a distributed crawl, as the dashboard shows and steers it from Redis.

``ClusterProject`` is the ``LiveProject`` surface (see ``_live``) of a crawl that runs
in other processes, as ``ProjectControl`` is of one in this process, so the views, the
API and ``/metrics`` serve it unchanged. Where each figure comes from:

- queue sizes, failed tasks, retries: the job's ``ShardedRedisFrontier`` (``counts``,
  ``tasks(FAILED)``, ``retry_failed``);
- status, rate and burst, MAX_RATE/MAX_BURST, tasks leased and waiting for a slot and
  tasks in flight, recent results and failures, download slots: the workers'
  ``Heartbeat``s (``P:workers``) and the control record (``P:control``), read by
  ``refresh`` once a second; counts are the live workers' added up, slots, the tasks in
  flight listed and results are what they report of themselves (each its busiest
  slots, its oldest tasks in flight and its latest outcomes);
- the tasks by where they are (``TaskCounts``): waiting and delayed from the frontier,
  leased and in flight from the live workers, done from the job's shared stats; the
  stats' ``tasks/...`` values are these, not one worker's;
- successes and failures over 5 minutes and an hour, and pages/s: the job's shared
  counters ``task_attempts/*``, sampled by ``refresh`` into ``ActivityWindows`` (the
  monitor's own buckets); the windows therefore start when the dashboard did, and
  "all time" is the job's own total;
- changing the rate, pausing, resuming: a write to the control record, which every
  worker applies within about a second. A rate or burst above what any live worker
  allows is refused here, by the rule a worker applies (``scheduler.RateLimits``);
- a job whose state vanished from Redis after the dashboard had seen it (restarted
  without persistence, flushed) shows as failed, with ``JobStateLost``'s message as its
  error, until a new run of the job starts; the dashboard never creates a job.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from skitter._clock import Clock
from skitter._secrets import mask_text
from skitter.cluster import (
    FAILED,
    SUCCEEDED,
    ControlRecord,
    Heartbeat,
    JobControl,
    OutcomeBeat,
    RedisStats,
)
from skitter.engine import (
    ActiveTask,
    ActivityWindows,
    Outcome,
    Stats,
    TaskCounts,
    WindowCounts,
)
from skitter.exceptions import FrontierUnavailable, JobStateLost
from skitter.frontier import FrontierCounts, TaskInfo, TaskState
from skitter.frontier.redis import ShardedRedisFrontier
from skitter.redis import REDIS_ERRORS, JobKeys, redis_errors_translated
from skitter.scheduler import RateLimits
from skitter.scheduler.wiring import DONE

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["ClusterMonitor", "ClusterProject", "Totals", "active_tasks", "merged_slots", "outcomes"]

log = logging.getLogger("skitter.dashboard")

#: A worker whose last heartbeat is older than this many intervals is counted as gone.
ALIVE_BEATS = 5


class ClusterMonitor:
    """``ProjectMonitor``'s read side for a whole job, from sampled cluster totals."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.active: dict[str, ActiveTask] = {}
        self.recent: list[Outcome] = []
        self.failures: list[Outcome] = []
        self._totals = (0, 0)
        self._sampled = False
        self._windows = ActivityWindows()

    def sample(self, now: float, success: int, failure: int) -> None:
        """Record the job's totals now; what grew since the last sample counts as
        having happened in the current bucket (the first sample is the baseline)."""
        last_success, last_failure = self._totals
        if self._sampled:
            self._windows.add(
                now, success=max(0, success - last_success), failure=max(0, failure - last_failure)
            )
        self._sampled = True
        self._totals = (success, failure)

    def counts(self, seconds: float | None = None) -> WindowCounts:
        if seconds is None:
            return WindowCounts(*self._totals)
        return self._windows.counts(seconds, self._clock.time())

    def pages_per_second(self, minutes: int = 10) -> list[float]:
        return self._windows.pages_per_second(minutes, self._clock.time())


class Totals:
    """The job's summed stats as last read: ``get`` and ``to_dict`` like ``Stats``."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.values)


class ClusterProject:
    """One job (``project`` = the spider's name) of the crawl on ``client``'s Redis."""

    def __init__(
        self,
        client: Redis,
        project: str,
        job: str,
        *,
        clock: Clock,
        prefix: str = "skitter",
    ) -> None:
        self.project = project
        self.job = job
        self.keys = JobKeys.for_job(project, job, prefix)
        self.frontier = ShardedRedisFrontier(
            client,
            project=project,
            job=job,
            key_prefix=prefix,
            kind=None,
            shards=None,
            create=False,
        )
        #: Why the job's state is gone (``JobStateLost``), once seen; None while it is there.
        self.lost: str | None = None
        self.control = JobControl(client, self.keys)
        self.clock = clock
        self.stats = Totals()
        self._cluster_stats = RedisStats(client, self.keys, Stats())
        self._monitor = ClusterMonitor(clock)
        self._record = ControlRecord()
        self._workers: dict[str, Heartbeat] = {}
        self._counts = FrontierCounts(0, 0, 0)
        self._refreshed = False

    @property
    def name(self) -> str:
        """``project:job``."""
        return f"{self.project}:{self.job}"

    @property
    def _where(self) -> str:
        return f"Redis for job {self.name}"

    def __repr__(self) -> str:
        return f"<ClusterProject {self.name}>"

    # -- reading Redis ------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Read the job's totals, control record, roster and queue (the source calls
        this once a second; four round trips)."""
        now = self.clock.time()
        with self._reading():
            totals = await self._cluster_stats.totals()
            self._record, self._workers = await self.control.read()
            try:
                self._counts = await self.frontier.counts(now)
                self.lost = None
            except JobStateLost as exc:
                self._state_gone(exc)
        self._refreshed = True
        # a finished worker's reason is not the job's
        if self.status not in ("done", "failed", "monitors_failed"):
            totals.pop("finish_reason", None)
            totals.pop("finish_time", None)
        if self.lost is not None:
            totals["finish_error"] = self.lost
        self.stats.values = totals
        totals.update(self.task_counts().stats())  # the job's, not the last writer's
        self._monitor.sample(now, int(totals.get(SUCCEEDED, 0)), int(totals.get(FAILED, 0)))
        self._monitor.active = self._in_flight()
        beats = list(self._workers.values())
        self._monitor.recent = outcomes(beat.recent for beat in beats)
        self._monitor.failures = outcomes(beat.failures for beat in beats)

    def _state_gone(self, exc: JobStateLost) -> None:
        """The job has no (or another) epoch. Lost, if the dashboard had seen it: it
        shows so until a new run starts the job again (the frontier looks afresh at the
        next refresh). A job never seen (only its workers' roster is left) has no state
        to show."""
        self._counts = FrontierCounts(0, 0, 0)
        if self.frontier.epoch is not None:
            self.lost = str(exc)
            self.frontier.forget()

    def _in_flight(self) -> dict[str, ActiveTask]:
        """The tasks the live workers are downloading or processing, as each reports its
        oldest ones (a task leased and waiting for a slot is not one: it is counted in
        ``task_counts().leased``)."""
        return active_tasks(self.alive_workers().values())

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        """The job's tasks by where they are: waiting and delayed in its frontier
        (``counts``, else as last read), leased and in flight on its live workers, done
        by all of them."""
        counts = counts if counts is not None else self._counts
        alive = self.alive_workers().values()
        return TaskCounts(
            waiting=counts.ready,
            delayed=counts.delayed,
            leased=sum(beat.leased for beat in alive),
            in_flight=sum(beat.in_flight for beat in alive),
            done=int(self.stats.get(DONE, 0) or 0),
        )

    def alive_workers(self) -> dict[str, Heartbeat]:
        """Workers whose last heartbeat is recent and did not say they were done (or had
        failed)."""
        now = self.clock.time()
        alive = {}
        for worker, beat in sorted(self._workers.items()):
            fresh = now - beat.seen <= ALIVE_BEATS * max(beat.interval, 1.0)
            if fresh and beat.status not in ("done", "failed", "monitors_failed"):
                alive[worker] = beat
        return alive

    # -- the LiveProject surface ----------------------------------------------------------
    @property
    def status(self) -> str:
        """running, paused or checking as the live workers are (paused or running as
        soon as a person asked, before every worker applied it); with no live worker:
        idle while work is left, else done."""
        if not self._refreshed:
            return "new"
        if self.lost is not None:
            return "failed"
        alive = self.alive_workers()
        record = self._record
        if record.pause_seq and record.paused:
            return "paused"
        if any(beat.pause_seq < record.pause_seq for beat in alive.values()):
            return "running"  # resumed, and not every worker has seen it yet
        if alive:
            statuses = {beat.status for beat in alive.values()}
            for status in ("running", "checking", "paused"):
                if status in statuses:
                    return status
            return "running"
        counts = self._counts
        if counts.ready or counts.delayed or counts.processing:
            return "idle"
        if any(beat.status == "failed" for beat in self._workers.values()):
            return "failed"
        return "done"

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """What the control record asks for, once set; before that, a live worker's own."""
        record = self._record
        if record.rate_seq:
            rate = record.rate
            if rate is None:
                return None, None
            return rate, self._limits().burst_for(rate, record.burst)
        for beat in (*self.alive_workers().values(), *self._workers.values()):
            return beat.rate, beat.burst
        return None, None

    @property
    def limits(self) -> RateLimits:
        return self._limits()

    @property
    def monitor(self) -> ClusterMonitor | None:
        return self._monitor if self._refreshed else None

    async def queue_counts(self) -> FrontierCounts:
        try:
            return await self.frontier.counts(self.clock.time())
        except JobStateLost as exc:
            self._state_gone(exc)
            return self._counts

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]:
        return await self.frontier.tasks(TaskState.FAILED, limit)

    async def retry_failed(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue FAILED tasks again; the workers find them at their next upkeep."""
        return await self.frontier.retry_failed(self.clock.time(), domain=domain, reason=reason)

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue BAD tasks again (once the workers run fixed code)."""
        return await self.frontier.requeue_bad(self.clock.time(), domain=domain, reason=reason)

    def slot_stats(self) -> list[dict[str, Any]]:
        """The live workers' busiest slots, added up per slot."""
        return merged_slots(self.alive_workers().values())

    def proxy_stats(self) -> list[dict[str, Any]]:
        """None: each worker keeps its own proxy pool and does not report it (its
        ``proxy/...`` stats are in the job's stats)."""
        return []

    def cluster_summary(self) -> dict[str, Any]:
        """What a job has that a local project has not: its name, its live workers, and
        why a worker could not apply the control record (if one could not)."""
        alive = self.alive_workers()
        errors = sorted({b.control_error for b in alive.values() if b.control_error})
        return {"job": self.job, "workers": len(alive), "control_errors": errors}

    async def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        """Ask every worker for ``rate`` and ``burst``; ConfigError above a live worker's
        MAX_RATE or MAX_BURST (the message names the worker). The burst left out stays
        so in the record: each worker caps its default at its own MAX_BURST."""
        self._limits().check(rate, burst)
        await self._write(self.control.set_rate(rate, burst, self.clock.time()))

    async def pause(self) -> None:
        await self._write(self.control.set_paused(True, self.clock.time()))

    async def resume(self) -> None:
        await self._write(self.control.set_paused(False, self.clock.time()))

    async def _write(self, change: Awaitable[None]) -> None:
        with self._reading():
            await change
            self._record, self._workers = await self.control.read()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Redis's errors as every Redis caller reads them (``redis_errors_translated``);
        one that reading leaves alone (junk in a key, say) makes the job unreadable for
        now, not the page broken."""
        try:
            with redis_errors_translated(self._where):
                yield
        except REDIS_ERRORS as exc:
            raise FrontierUnavailable(f"{self._where}: {mask_text(str(exc))}") from exc

    def _limits(self) -> RateLimits:
        """The lowest MAX_RATE and the lowest MAX_BURST of the live workers (of any
        worker in the roster if none is live), each named after the worker it is of."""
        beats = self.alive_workers() or self._workers
        max_rate = max_burst = None
        rate_of = burst_of = ""
        for worker, beat in beats.items():
            if beat.max_rate is not None and (max_rate is None or beat.max_rate < max_rate):
                max_rate, rate_of = beat.max_rate, f" of worker {worker}"
            if beat.max_burst is not None and (max_burst is None or beat.max_burst < max_burst):
                max_burst, burst_of = beat.max_burst, f" of worker {worker}"
        return RateLimits(max_rate, max_burst, rate_of, burst_of)


def active_tasks(beats: Iterable[Heartbeat]) -> dict[str, ActiveTask]:
    """The tasks in flight the workers of ``beats`` list (each its oldest ones)."""
    active: dict[str, ActiveTask] = {}
    for beat in beats:
        for task in beat.active:
            active[task.taskid] = ActiveTask(
                task.taskid, task.url, task.slot, task.attempt, task.started
            )
    return active


def merged_slots(beats: Iterable[Heartbeat]) -> list[dict[str, Any]]:
    """The busiest slots the workers of ``beats`` list, added up per slot."""
    merged: dict[str, dict[str, Any]] = {}
    for beat in beats:
        for slot in beat.slots:
            into = merged.get(slot.slot)
            if into is None:
                merged[slot.slot] = slot.row()
                continue
            for key in ("in_flight", "queued", "done", "failed"):
                into[key] += getattr(slot, key)
            into["backoff"] = max(into["backoff"], slot.backoff)
    return [merged[key] for key in sorted(merged)]


def outcomes(lists: Iterable[Iterable[OutcomeBeat]]) -> list[Outcome]:
    """Every worker's latest outcomes of one kind, merged, oldest first."""
    found = [
        Outcome(o.taskid, o.url, o.ok, o.status, o.reason, o.items, o.at)
        for outcomes in lists
        for o in outcomes
    ]
    found.sort(key=lambda outcome: outcome.at)
    return found
