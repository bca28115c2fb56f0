"""``LiveProject``: what the dashboard reads and changes of a project.

The views, the API and ``/metrics`` only use this surface, so one set of them serves
two kinds of project: one running in this process (``engine.ProjectControl``, which a
``Crawler`` carries as ``crawler.control``: ``--ui``, ``serve``), and a
``ClusterProject``, one job of a distributed crawl read from Redis
(``skitter dashboard --redis``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skitter._clock import Clock
    from skitter.engine import ActiveTask, Outcome, TaskCounts, WindowCounts
    from skitter.frontier import FrontierCounts, TaskInfo
    from skitter.scheduler import RateLimits

__all__ = ["LiveMonitor", "LiveProject", "LiveStats", "SteeredProject"]


class LiveMonitor(Protocol):
    """Active tasks, recent outcomes (oldest first) and counts over time."""

    @property
    def active(self) -> Mapping[str, ActiveTask]: ...

    @property
    def recent(self) -> Iterable[Outcome]: ...

    @property
    def failures(self) -> Iterable[Outcome]: ...

    def counts(self, seconds: float | None = None) -> WindowCounts: ...

    def pages_per_second(self, minutes: int = 10) -> list[float]: ...


class LiveStats(Protocol):
    """The project's statistics, as read."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def to_dict(self) -> dict[str, Any]: ...


class SteeredProject(Protocol):
    """What every kind of project tells and does alike: its name, clock, limits, status
    and rate, its tasks by where they are, and its failed tasks to list and queue again.
    ``status`` is new, running, paused, checking, done or failed (a cluster job also
    idle: no live worker, work left)."""

    @property
    def name(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def limits(self) -> RateLimits: ...

    @property
    def status(self) -> str: ...

    @property
    def rate(self) -> tuple[float | None, float | None]: ...

    async def queue_counts(self) -> FrontierCounts: ...

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        """Tasks by where they are (``engine.TaskCounts``), the frontier's part from
        ``counts`` when given (read once for a whole view)."""
        ...

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]: ...

    async def retry_failed(
        self, *, domain: str | None = None, reason: str | None = None
    ) -> int: ...

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int: ...


class LiveProject(SteeredProject, Protocol):
    """A project to show and steer. ``set_rate``, ``pause`` and ``resume`` may return an
    awaitable (a cluster project writes to Redis); ``set_rate`` raises ``ConfigError``
    above MAX_RATE/MAX_BURST with a message for the person. A change takes effect at
    once: the project wakes whatever dispatches its tasks."""

    @property
    def stats(self) -> LiveStats: ...

    @property
    def monitor(self) -> LiveMonitor | None: ...

    def slot_stats(self) -> list[dict[str, Any]]: ...

    def proxy_stats(self) -> list[dict[str, Any]]: ...

    def set_rate(
        self, rate: float | None, burst: float | None = None
    ) -> Awaitable[None] | None: ...

    def pause(self) -> Awaitable[None] | None: ...

    def resume(self) -> Awaitable[None] | None: ...
