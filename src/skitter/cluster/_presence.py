"""A worker's side of the cluster dashboard: its heartbeat, and the job's control record.

Once a second (``interval``) a worker of a distributed crawl publishes what a dashboard
in another process needs to show and steer it (``skitter dashboard --redis``): its
status, its rate and burst now and by default, the MAX_RATE and MAX_BURST it would
refuse beyond, how many tasks it holds waiting for a slot and has in flight, what it
is downloading, its latest results and failures, its busiest slots (a ``Heartbeat``,
see ``_heartbeat``). In the same round trip it reads the job's
control record and applies what changed since it last looked, through the same
``ProjectControl`` methods a local dashboard calls (``apply_rate``: ``set_rate`` for
this process alone, ``pause``, ``resume``). A rate set on this worker's own UI is
written to the control record (``share_rate``), so it reaches every worker too. What
it needs of the project is ``Steered``: the engine's
``ProjectControl`` is one, and this module never imports the engine.

It also adds this worker's finished tasks to two cluster-wide counters,
``task_attempts/succeeded`` and ``task_attempts/failed`` (the monitor's counts, as
deltas into the job's shared stats), so the dashboard can count successes and
failures over time for the whole job from one number each.

A Redis outage costs heartbeats, never the crawl: the error is logged once and the next
beat tries again. A worker gone for longer than ``STALE_BEATS`` of its intervals is
pruned from the roster by the next beat of any worker of the job (by Redis's clock).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol

import msgspec

from skitter._clock import Clock
from skitter._secrets import mask_text
from skitter._tasks import periodic
from skitter._types import StatsSink
from skitter.cluster._control import ControlRecord, JobControl
from skitter.cluster._heartbeat import Heartbeat, OutcomeBeat, SlotBeat, TaskBeat
from skitter.exceptions import ConfigError
from skitter.redis import REDIS_ERRORS, translate
from skitter.settings import ClusterSettings, Settings

__all__ = ["FAILED", "SUCCEEDED", "Steered", "WorkerPresence", "heartbeat_of"]

#: What a failed Redis call raises here.
_UNREACHABLE: tuple[type[Exception], ...] = (*REDIS_ERRORS, OSError)

log = logging.getLogger("skitter.cluster")

SUCCEEDED = "task_attempts/succeeded"
FAILED = "task_attempts/failed"
#: After how many intervals without a heartbeat a worker is dropped from the roster
#: (the dashboard counts it as gone after five).
STALE_BEATS = 10
#: How much of its live state a heartbeat carries (it is rewritten every second).
_ACTIVE, _OUTCOMES, _SLOTS = 50, 20, 20


class _Task(Protocol):
    @property
    def taskid(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def slot(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def started(self) -> float: ...


class _Outcome(Protocol):
    @property
    def taskid(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def status(self) -> int | None: ...
    @property
    def reason(self) -> str: ...
    @property
    def items(self) -> int: ...
    @property
    def at(self) -> float: ...


class _Monitor(Protocol):
    @property
    def active(self) -> Mapping[str, _Task]: ...
    @property
    def recent(self) -> Iterable[_Outcome]: ...
    @property
    def failures(self) -> Iterable[_Outcome]: ...

    def counts(self, seconds: float | None = None) -> tuple[int, int]: ...


#: Writes a rate and burst to the job's control record.
_Share = Callable[[float | None, float | None], Awaitable[None]]


class Steered(Protocol):
    """What a worker's presence reads of its project and steers (``ProjectControl``)."""

    @property
    def clock(self) -> Clock: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def stats(self) -> StatsSink: ...
    @property
    def status(self) -> str: ...
    @property
    def rate(self) -> tuple[float | None, float | None]: ...
    @property
    def monitor(self) -> _Monitor | None: ...

    def apply_rate(self, rate: float | None, burst: float | None = None) -> None: ...

    def share_rate(self, share: _Share) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def slot_stats(self) -> list[dict[str, Any]]: ...

    def task_counts(self) -> _Counts: ...


class _Counts(Protocol):
    @property
    def leased(self) -> int: ...
    @property
    def in_flight(self) -> int: ...


class WorkerPresence:
    """Heartbeats for one worker's project, and the job's control record applied to it."""

    def __init__(
        self, control: JobControl, owner: str, project: Steered, *, interval: float = 1.0
    ) -> None:
        self.control = control
        self.owner = owner
        self.interval = interval
        self._project = project
        self._started = project.clock.time()
        self._default = project.rate
        self._rate_seq = 0
        self._pause_seq = 0
        self._counted = (0, 0)
        self._error: str | None = None
        self._failing = False

    async def run(self) -> None:
        """Beat every ``interval`` seconds until cancelled."""
        await periodic(self.interval, self.beat, first=True)

    async def beat(self) -> None:
        """Publish a heartbeat and apply the control record; Redis errors are logged."""
        self._count()
        stale_after = STALE_BEATS * self.interval
        try:
            record = await self.control.beat(self.owner, self.heartbeat(), stale_after=stale_after)
        except _UNREACHABLE as exc:
            if not self._failing:
                why = translate(exc, "Redis") or mask_text(f"{type(exc).__name__}: {exc}")
                log.warning("Worker %s: no heartbeat: %s", self.owner, why)
            self._failing = True
            return
        self._failing = False
        self.apply(record)

    def apply(self, record: ControlRecord) -> None:
        """Apply the parts of ``record`` that changed since the last look."""
        project = self._project
        if record.rate_seq != self._rate_seq:
            self._rate_seq = record.rate_seq
            try:
                project.apply_rate(record.rate, record.burst)
                self._error = None
            except ConfigError as exc:  # the dashboard checks first; a newer worker may differ
                log.warning("Worker %s: cannot apply the job's rate: %s", self.owner, exc)
                self._error = str(exc)
        if record.pause_seq != self._pause_seq:
            self._pause_seq = record.pause_seq
            if record.paused:
                log.info("Worker %s: paused from the dashboard", self.owner)
                project.pause()
            else:
                log.info("Worker %s: resumed from the dashboard", self.owner)
                project.resume()

    async def share_rate(self, rate: float | None, burst: float | None) -> None:
        """Write ``rate`` and ``burst`` (set on this worker's UI, already applied here)
        to the job's control record: every worker's next token uses them."""
        await self.control.set_rate(rate, burst, self._project.clock.time())

    def _count(self) -> None:
        """Add the tasks finished since the last beat to the job's shared counters."""
        monitor = self._project.monitor
        if monitor is None:
            return
        success, failure = monitor.counts()
        last_success, last_failure = self._counted
        stats = self._project.stats
        if success > last_success:
            stats.inc(SUCCEEDED, success - last_success)
        if failure > last_failure:
            stats.inc(FAILED, failure - last_failure)
        self._counted = (success, failure)

    def heartbeat(self) -> Heartbeat:
        own = self._project.settings.view(ClusterSettings)
        return heartbeat_of(
            self._project,
            started=self._started,
            interval=self.interval,
            default_rate=self._default[0],
            default_burst=self._default[1],
            max_rate=own.max_rate,
            max_burst=own.max_burst,
            lease_seconds=own.lease_seconds,
            control_error=self._error,
            rate_seq=self._rate_seq,
            pause_seq=self._pause_seq,
        )


def heartbeat_of(project: Steered, **fields: Any) -> Heartbeat:
    """What ``project`` says of itself now: status, rate, its tasks leased and in
    flight (the oldest listed), latest outcomes and busiest slots; ``fields`` adds the
    rest (a worker's start, its limits). A ``--processes`` worker reports it too."""
    rate, burst = project.rate
    status = project.status
    active: list[TaskBeat] = []
    recent: list[OutcomeBeat] = []
    failures: list[OutcomeBeat] = []
    monitor = project.monitor
    if monitor is not None:
        tasks = sorted(monitor.active.values(), key=lambda task: task.started)[:_ACTIVE]
        active = [TaskBeat(t.taskid, t.url, t.slot, t.attempt, t.started) for t in tasks]
        recent = [_outcome(o) for o in list(monitor.recent)[-_OUTCOMES:]]
        failures = [_outcome(o) for o in list(monitor.failures)[-_OUTCOMES:]]
    slots: list[SlotBeat] = []
    if status != "new":
        rows = project.slot_stats()
        rows.sort(key=lambda s: s["in_flight"] + s["queued"], reverse=True)
        slots = [msgspec.convert(row, SlotBeat) for row in rows[:_SLOTS]]
    counts = project.task_counts()
    return Heartbeat(
        seen=project.clock.time(),
        status=status,
        rate=rate,
        burst=burst,
        finish_reason=project.stats.get("finish_reason"),
        leased=counts.leased,
        in_flight=counts.in_flight,
        active=active,
        recent=recent,
        failures=failures,
        slots=slots,
        **fields,
    )


def _outcome(o: _Outcome) -> OutcomeBeat:
    return OutcomeBeat(o.taskid, o.url, o.ok, o.status, o.reason, o.items, o.at)
