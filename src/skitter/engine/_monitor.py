"""What a person watching a project wants to see, kept cheaply on the hot path.

pyspider's dashboard showed, per project, successes and failures over the last 5
minutes, hour and all time, the tasks in flight, and the latest results and failures.
``ProjectMonitor`` keeps exactly that: a dict of active tasks, two bounded deques, and
per-10-second buckets of counts for the last hour (``ActivityWindows``: 360 buckets, a
few kilobytes). Each call is a dict or deque operation; nothing here does I/O or reads
a global clock. The cluster dashboard counts a whole job's successes and failures in
``ActivityWindows`` too, so a window means the same for a job as for a project.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from skitter._clock import Clock

__all__ = [
    "ActiveTask",
    "ActivityWindows",
    "Outcome",
    "ProjectMonitor",
    "TaskCounts",
    "WindowCounts",
]

BUCKET_SECONDS = 10
HOUR_BUCKETS = 360


@dataclass(slots=True)
class ActiveTask:
    """A task being downloaded or processed right now."""

    taskid: str
    url: str
    slot: str
    attempt: int  # 1 for the first try
    started: float  # epoch seconds


@dataclass(slots=True, frozen=True)
class Outcome:
    """How one task ended: ``ok`` with a status, or a failure with its reason."""

    taskid: str
    url: str
    ok: bool
    status: int | None
    reason: str
    items: int
    at: float  # epoch seconds


@dataclass(slots=True, frozen=True)
class TaskCounts:
    """A project's tasks by where they are, four numbers that never overlap: what the
    progress line, the stats (``tasks/...``), ``/metrics`` and the dashboard show.

    ``waiting`` are due in the frontier and leased by nobody; ``delayed`` wait there for
    their time (retries, recrawls); ``leased`` were taken from the frontier and wait in
    their download slot's queue for a download to start (its concurrency, delay, rate);
    ``in_flight`` are downloading or being processed (callback, pipelines); ``done``
    were settled for good (succeeded, FAILED or BAD). For a distributed job, ``leased``
    and ``in_flight`` add up every live worker's."""

    waiting: int = 0
    delayed: int = 0
    leased: int = 0
    in_flight: int = 0
    done: int = 0

    def stats(self) -> dict[str, int]:
        """The counts as the stats' ``tasks/...`` keys."""
        return {
            "tasks/waiting": self.waiting,
            "tasks/delayed": self.delayed,
            "tasks/leased": self.leased,
            "tasks/in_flight": self.in_flight,
            "tasks/done": self.done,
        }


class WindowCounts(NamedTuple):
    success: int
    failure: int


class _Buckets:
    """Counts in 10-second buckets over the last hour, plus the all-time total."""

    __slots__ = ("_counts", "_stamps", "total")

    def __init__(self) -> None:
        self._counts = [0] * HOUR_BUCKETS
        self._stamps = [-1] * HOUR_BUCKETS
        self.total = 0

    def add(self, now: float, n: int = 1) -> None:
        tick = int(now // BUCKET_SECONDS)
        i = tick % HOUR_BUCKETS
        if self._stamps[i] != tick:
            self._stamps[i] = tick
            self._counts[i] = 0
        self._counts[i] += n
        self.total += n

    def within(self, seconds: float, now: float) -> int:
        tick = int(now // BUCKET_SECONDS)
        oldest = tick - int(seconds // BUCKET_SECONDS) + 1
        return sum(
            count
            for count, stamp in zip(self._counts, self._stamps, strict=True)
            if oldest <= stamp <= tick
        )

    def series(self, buckets: int, now: float) -> list[int]:
        """Counts of the last ``buckets`` buckets, oldest first (for a chart)."""
        tick = int(now // BUCKET_SECONDS)
        out = []
        for t in range(tick - buckets + 1, tick + 1):
            i = t % HOUR_BUCKETS
            out.append(self._counts[i] if self._stamps[i] == t else 0)
        return out


class ActivityWindows:
    """Successes and failures counted in 10-second buckets over the last hour, and in
    all: what the 5-minute and 1-hour windows and the pages/s chart are made of."""

    __slots__ = ("_failure", "_success")

    def __init__(self) -> None:
        self._success = _Buckets()
        self._failure = _Buckets()

    def add(self, now: float, *, success: int = 0, failure: int = 0) -> None:
        """Count ``success`` successes and ``failure`` failures as happened at ``now``."""
        if success:
            self._success.add(now, success)
        if failure:
            self._failure.add(now, failure)

    def counts(self, seconds: float | None, now: float) -> WindowCounts:
        """Successes and failures in the last ``seconds`` (None: all counted). Windows
        are whole 10-second buckets, so "5 minutes" is 300 s to within 10 s."""
        if seconds is None:
            return WindowCounts(self._success.total, self._failure.total)
        return WindowCounts(self._success.within(seconds, now), self._failure.within(seconds, now))

    def pages_per_second(self, minutes: int, now: float) -> list[float]:
        """Successes per second in each 10-second bucket of the last ``minutes``."""
        buckets = minutes * 60 // BUCKET_SECONDS
        return [n / BUCKET_SECONDS for n in self._success.series(buckets, now)]


class ProjectMonitor:
    """Live view of one project: active tasks, recent outcomes, windowed counts."""

    def __init__(self, clock: Clock, keep: int = 100) -> None:
        self._clock = clock
        self.active: dict[str, ActiveTask] = {}
        self.recent: deque[Outcome] = deque(maxlen=keep)
        self.failures: deque[Outcome] = deque(maxlen=keep)
        self._windows = ActivityWindows()

    #: Spider middlewares the monitor needs next to the spider (the tracing one's).
    spider_hooks: Sequence[Any] = ()

    def started(self, taskid: str, url: str, slot: str, attempt: int, request: Any = None) -> None:
        """A task started (``request`` is its Request, for a monitor that reads more)."""
        self.active[taskid] = ActiveTask(taskid, url, slot, attempt, self._clock.time())

    def finished(
        self,
        taskid: str,
        url: str,
        *,
        ok: bool,
        status: int | None = None,
        reason: str = "",
        items: int = 0,
    ) -> None:
        """A task ended (a retry scheduled counts as a failure of that attempt)."""
        self.active.pop(taskid, None)
        now = self._clock.time()
        outcome = Outcome(taskid, url, ok, status, reason, items, now)
        if ok:
            self._windows.add(now, success=1)
            self.recent.append(outcome)
        else:
            self._windows.add(now, failure=1)
            self.failures.append(outcome)

    def counts(self, seconds: float | None = None) -> WindowCounts:
        """Successes and failures in the last ``seconds`` (None: all time). Windows are
        whole 10-second buckets, so "5 minutes" is 300 s to within 10 s."""
        return self._windows.counts(seconds, self._clock.time())

    def pages_per_second(self, minutes: int = 10) -> list[float]:
        """Successful tasks per second in each 10-second bucket of the last minutes."""
        return self._windows.pages_per_second(minutes, self._clock.time())
