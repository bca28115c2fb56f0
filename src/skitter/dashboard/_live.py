"""``LiveProject``: what the dashboard reads and changes of a project.

The views, the API and ``/metrics`` only use this surface, so one set of them serves
two kinds of project: a ``Crawler`` running in this process (``--ui``, ``serve``), and a
``ClusterProject``, one job of a distributed crawl read from Redis
(``skitter dashboard --redis``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skitter._clock import Clock
    from skitter.engine import ActiveTask, Outcome, WindowCounts
    from skitter.frontier import FrontierCounts, TaskInfo

__all__ = ["LiveMonitor", "LiveProject"]


class LiveMonitor(Protocol):
    """Active tasks, recent outcomes (oldest first) and counts over time."""

    active: Mapping[str, ActiveTask]
    recent: Iterable[Outcome]
    failures: Iterable[Outcome]

    def counts(self, seconds: float | None = None) -> WindowCounts: ...

    def pages_per_second(self, minutes: int = 10) -> list[float]: ...


class LiveProject(Protocol):
    """A project to show and steer. ``status`` is new, running, paused, checking, done or failed
    (a cluster job also idle: no live worker, work left). ``set_rate``, ``pause`` and
    ``resume`` may return an awaitable (a cluster project writes to Redis); ``set_rate``
    raises ``ConfigError`` above MAX_RATE/MAX_BURST with a message for the person."""

    spider: Any
    spidercls: Any
    clock: Clock
    settings: Mapping[str, Any]
    stats: Any  # get(key, default) and to_dict()

    @property
    def status(self) -> str: ...

    @property
    def rate(self) -> tuple[float | None, float | None]: ...

    @property
    def monitor(self) -> LiveMonitor | None: ...

    @property
    def engine(self) -> Any: ...

    async def queue_counts(self) -> FrontierCounts: ...

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]: ...

    async def retry_failed(
        self, *, domain: str | None = None, reason: str | None = None
    ) -> int: ...

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int: ...

    def slot_stats(self) -> list[dict[str, Any]]: ...

    def set_rate(
        self, rate: float | None, burst: float | None = None
    ) -> Awaitable[None] | None: ...

    def pause(self) -> Awaitable[None] | None: ...

    def resume(self) -> Awaitable[None] | None: ...
