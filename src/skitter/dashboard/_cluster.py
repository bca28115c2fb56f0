"""One job of a distributed crawl, as the dashboard shows and steers it from Redis.

``ClusterProject`` is the ``LiveProject`` surface of a ``Crawler`` (see ``_live``) for
a crawl that runs in other processes, so the views, the API and ``/metrics`` serve it
unchanged. Where each figure comes from:

- queue sizes, failed tasks, retries and tasks in flight: the job's ``RedisFrontier``
  (``counts``, ``tasks(FAILED)``, ``retry_failed``, ``leased``);
- status, rate and burst, MAX_RATE/MAX_BURST, recent results and failures, download
  slots: the workers' heartbeats (``P:workers``) and the control record
  (``P:control``), read by ``refresh`` once a second; slots and results are what the
  live workers report of themselves (each its busiest slots and latest outcomes);
- successes and failures over 5 minutes and an hour, and pages/s: the job's shared
  counters ``task_attempts/*``, sampled by ``refresh``; the windows therefore start
  when the dashboard did, and "all time" is the job's own total;
- changing the rate, pausing, resuming: a write to the control record, which every
  worker applies within about a second. A rate or burst above what any live worker
  allows is refused here, with the same message a worker would give;
- a job whose state vanished from Redis after the dashboard had seen it (restarted
  without persistence, flushed) shows as failed, with ``JobStateLost``'s message as its
  error, until a new run of the job starts; the dashboard never creates a job.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from skitter._clock import Clock
from skitter._presence import FAILED, SUCCEEDED
from skitter._secrets import mask_text
from skitter.dashboard._views import host_of
from skitter.engine import ActiveTask, Outcome, WindowCounts
from skitter.exceptions import ConfigError, FrontierUnavailable, JobStateLost
from skitter.frontier import FrontierCounts, TaskInfo, TaskState
from skitter.frontier._redis import JobKeys, RedisFrontier
from skitter.frontier._redis._control import ControlRecord, JobControl
from skitter.frontier._redis._errors import redis_errors_translated
from skitter.frontier._redis._stats import RedisStats
from skitter.scheduler._tokenbucket import default_burst

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["ClusterMonitor", "ClusterProject"]

log = logging.getLogger("skitter.dashboard")

BUCKET_SECONDS = 10
HOUR = 3600.0
#: Tasks in flight listed per job.
ACTIVE_LIMIT = 200
#: A worker whose last heartbeat is older than this many intervals is counted as gone.
ALIVE_BEATS = 5


@dataclass(frozen=True, slots=True)
class JobName:
    """Stands in for a spider: the views name a project after ``spider.name``."""

    name: str


class ClusterMonitor:
    """``ProjectMonitor``'s read side for a whole job, from sampled cluster totals."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.active: dict[str, ActiveTask] = {}
        self.recent: list[Outcome] = []
        self.failures: list[Outcome] = []
        self._totals = (0, 0)
        self._sampled = False
        # 10-second bucket number -> (successes, failures) counted in it
        self._buckets: dict[int, tuple[int, int]] = {}

    def sample(self, now: float, success: int, failure: int) -> None:
        """Record the job's totals now; what grew since the last sample counts as
        having happened in the current bucket (the first sample is the baseline)."""
        last_success, last_failure = self._totals
        if self._sampled:
            grew = (max(0, success - last_success), max(0, failure - last_failure))
            if grew != (0, 0):
                tick = int(now // BUCKET_SECONDS)
                s, f = self._buckets.get(tick, (0, 0))
                self._buckets[tick] = (s + grew[0], f + grew[1])
            oldest = int((now - HOUR) // BUCKET_SECONDS)
            for tick in [t for t in self._buckets if t < oldest]:
                del self._buckets[tick]
        self._sampled = True
        self._totals = (success, failure)

    def counts(self, seconds: float | None = None) -> WindowCounts:
        if seconds is None:
            return WindowCounts(*self._totals)
        tick = int(self._clock.time() // BUCKET_SECONDS)
        oldest = tick - int(seconds // BUCKET_SECONDS) + 1
        inside = [v for t, v in self._buckets.items() if oldest <= t <= tick]
        return WindowCounts(sum(v[0] for v in inside), sum(v[1] for v in inside))

    def pages_per_second(self, minutes: int = 10) -> list[float]:
        buckets = minutes * 60 // BUCKET_SECONDS
        tick = int(self._clock.time() // BUCKET_SECONDS)
        return [
            self._buckets.get(t, (0, 0))[0] / BUCKET_SECONDS
            for t in range(tick - buckets + 1, tick + 1)
        ]


class _Totals:
    """The job's summed stats as last read: ``get`` and ``to_dict`` like ``Stats``."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.values)


class ClusterProject:
    """One job (``project`` = the spider's name) of the crawl on ``client``'s Redis."""

    engine = None  # nothing in this process to wake: workers read the record themselves

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
        self.frontier = RedisFrontier(
            client, project=project, job=job, key_prefix=prefix, kind=None, create=False
        )
        #: Why the job's state is gone (``JobStateLost``), once seen; None while it is there.
        self.lost: str | None = None
        self.control = JobControl(client, self.keys)
        self.spider = JobName(f"{project}:{job}")
        self.spidercls = JobName
        self.clock = clock
        self.stats = _Totals()
        self._cluster_stats = RedisStats(client, self.keys)
        self._monitor = ClusterMonitor(clock)
        self._record = ControlRecord()
        self._workers: dict[str, dict[str, Any]] = {}
        self._counts = FrontierCounts(0, 0, 0)
        self._first_seen: dict[str, float] = {}
        self._refreshed = False

    @property
    def name(self) -> str:
        return str(self.spider.name)

    @property
    def _where(self) -> str:
        return f"Redis for job {self.name}"

    def __repr__(self) -> str:
        return f"<ClusterProject {self.name}>"

    # -- reading Redis ------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Read the job's totals, control record, roster, queue and leases (the source
        calls this once a second; five round trips)."""
        now = self.clock.time()
        try:
            with redis_errors_translated(self._where):
                totals = await self._cluster_stats.totals()
                self._record, self._workers = await self.control.read()
                try:
                    self._counts = await self.frontier.counts(now)
                    leased = await self.frontier.leased(ACTIVE_LIMIT)
                    self.lost = None
                except JobStateLost as exc:
                    self._state_gone(exc)
                    leased = []
        except RedisError as exc:  # one the translation leaves alone: junk in a key, say
            raise FrontierUnavailable(f"{self._where}: {mask_text(str(exc))}") from exc
        self._refreshed = True
        if self.status not in ("done", "failed"):  # a finished worker's reason is not the job's
            totals.pop("finish_reason", None)
            totals.pop("finish_time", None)
        if self.lost is not None:
            totals["finish_error"] = self.lost
        self.stats.values = totals
        self._monitor.sample(now, int(totals.get(SUCCEEDED, 0)), int(totals.get(FAILED, 0)))
        self._monitor.active = self._active(leased, now)
        beats = list(self._workers.values())
        self._monitor.recent = _outcomes(beats, "recent")
        self._monitor.failures = _outcomes(beats, "failures")

    def _state_gone(self, exc: JobStateLost) -> None:
        """The job has no (or another) epoch. Lost, if the dashboard had seen it: it
        shows so until a new run starts the job again (the frontier looks afresh at the
        next refresh). A job never seen (only its workers' roster is left) has no state
        to show."""
        self._counts = FrontierCounts(0, 0, 0)
        if self.frontier.epoch is not None:
            self.lost = str(exc)
            self.frontier.epoch = None

    def _active(self, leased: Iterable[Any], now: float) -> dict[str, ActiveTask]:
        """Tasks leased in Redis, with slot and start time from the heartbeat of the
        worker downloading it; a task leased but not started yet (parked in a worker's
        slot queue) shows since when the dashboard has seen it."""
        downloading = {
            entry[0]: entry
            for beat in self.alive_workers().values()
            for entry in beat.get("active", [])
            if isinstance(entry, list) and len(entry) == 5
        }
        active: dict[str, ActiveTask] = {}
        for lease in leased:
            taskid = lease.taskid
            entry = downloading.get(taskid)
            if entry is not None:
                active[taskid] = ActiveTask(
                    taskid, lease.url, str(entry[2]), int(entry[3]), entry[4]
                )
            else:
                started = self._first_seen.get(taskid, now)
                active[taskid] = ActiveTask(
                    taskid, lease.url, host_of(lease.url), lease.retried + 1, started
                )
        self._first_seen = {taskid: task.started for taskid, task in active.items()}
        return active

    def alive_workers(self) -> dict[str, dict[str, Any]]:
        """Workers whose last heartbeat is recent and did not say they were done (or had
        failed)."""
        now = self.clock.time()
        alive = {}
        for worker, beat in sorted(self._workers.items()):
            interval = _number(beat.get("interval")) or 1.0
            seen = _number(beat.get("seen")) or 0.0
            if beat.get("status") not in ("done", "failed") and now - seen <= ALIVE_BEATS * max(
                interval, 1.0
            ):
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
        if any((_number(b.get("pause_seq")) or 0) < record.pause_seq for b in alive.values()):
            return "running"  # resumed, and not every worker has seen it yet
        if alive:
            statuses = {str(beat.get("status")) for beat in alive.values()}
            for status in ("running", "checking", "paused"):
                if status in statuses:
                    return status
            return "running"
        counts = self._counts
        if counts.ready or counts.delayed or counts.processing:
            return "idle"
        if any(beat.get("status") == "failed" for beat in self._workers.values()):
            return "failed"
        return "done"

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """What the control record asks for, once set; before that, a live worker's own."""
        record = self._record
        if record.rate_seq:
            rate, burst = record.rate, record.burst
            if rate is not None and burst is None:
                cap = self._limit("max_burst")[0]
                burst = default_burst(rate) if cap is None else min(default_burst(rate), cap)
            return rate, burst
        for beat in (*self.alive_workers().values(), *self._workers.values()):
            return _number(beat.get("rate")), _number(beat.get("burst"))
        return None, None

    @property
    def settings(self) -> dict[str, Any]:
        return {"MAX_RATE": self._limit("max_rate")[0], "MAX_BURST": self._limit("max_burst")[0]}

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
        merged: dict[str, dict[str, Any]] = {}
        for beat in self.alive_workers().values():
            for slot in beat.get("slots", []):
                if not isinstance(slot, dict) or "slot" not in slot:
                    continue
                into = merged.get(str(slot["slot"]))
                if into is None:
                    merged[str(slot["slot"])] = dict(slot)
                    continue
                for key in ("in_flight", "queued", "done", "failed"):
                    into[key] = (_number(into.get(key)) or 0) + (_number(slot.get(key)) or 0)
                backoffs = (
                    _number(into.get("backoff")) or 0.0,
                    _number(slot.get("backoff")) or 0.0,
                )
                into["backoff"] = max(backoffs)
        return [merged[key] for key in sorted(merged)]

    def cluster_summary(self) -> dict[str, Any]:
        """What a job has that a local project has not: its name, its live workers, and
        why a worker could not apply the control record (if one could not)."""
        alive = self.alive_workers()
        errors = sorted({str(b["control_error"]) for b in alive.values() if b.get("control_error")})
        return {"job": self.job, "workers": len(alive), "control_errors": errors}

    async def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        """Ask every worker for ``rate`` and ``burst``; ConfigError above a live worker's
        MAX_RATE or MAX_BURST (the message names the worker)."""
        if rate is not None:
            if not (math.isfinite(rate) and rate >= 0) or (burst is not None and burst < 0):
                raise ConfigError(f"rate and burst must be >= 0, got {rate!r} and {burst!r}")
            max_rate, who = self._limit("max_rate")
            if max_rate is not None and rate > max_rate:
                raise ConfigError(f"rate {rate:g}/s is above MAX_RATE ({max_rate:g}/s) of {who}")
            max_burst, who = self._limit("max_burst")
            if max_burst is not None and burst is not None and burst > max_burst:
                raise ConfigError(f"burst {burst:g} is above MAX_BURST ({max_burst:g}) of {who}")
        else:
            max_rate, who = self._limit("max_rate")
            if max_rate is not None:
                raise ConfigError(f"an unlimited rate is above MAX_RATE ({max_rate:g}/s) of {who}")
        await self._write(self.control.set_rate(rate, burst, self.clock.time()))

    async def pause(self) -> None:
        await self._write(self.control.set_paused(True, self.clock.time()))

    async def resume(self) -> None:
        await self._write(self.control.set_paused(False, self.clock.time()))

    async def _write(self, change: Any) -> None:
        try:
            with redis_errors_translated(self._where):
                await change
                self._record, self._workers = await self.control.read()
        except RedisError as exc:
            raise FrontierUnavailable(f"{self._where}: {mask_text(str(exc))}") from exc

    def _limit(self, key: str) -> tuple[float | None, str]:
        """The lowest ``key`` (max_rate, max_burst) of the live workers (of any worker
        in the roster if none is live), and who has it."""
        beats = self.alive_workers() or self._workers
        found: tuple[float | None, str] = (None, "")
        for worker, beat in beats.items():
            value = _number(beat.get(key))
            if value is not None and (found[0] is None or value < found[0]):
                found = (value, f"worker {worker}")
        return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _outcomes(beats: Iterable[dict[str, Any]], key: str) -> list[Outcome]:
    """Every worker's latest outcomes of one kind, merged, oldest first."""
    found = []
    for beat in beats:
        for entry in beat.get(key, []):
            if not (isinstance(entry, list) and len(entry) == 7):
                continue
            taskid, url, ok, status, reason, items, at = entry
            try:
                found.append(
                    Outcome(
                        str(taskid),
                        str(url),
                        bool(ok),
                        None if status is None else int(status),
                        str(reason),
                        int(items),
                        float(at),
                    )
                )
            except (TypeError, ValueError):
                continue
    found.sort(key=lambda outcome: outcome.at)
    return found
