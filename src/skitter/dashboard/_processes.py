"""``ProcessesProject``: the dashboard's view of a ``skitter crawl --processes N`` crawl.

It is the ``LiveProject`` surface (see ``_live``) of a crawl whose engines run in worker
processes and whose frontier, feeds and totals live in the coordinator, the process
that serves the dashboard. Each worker reports about twice a second its statistics and
a ``cluster.Heartbeat`` (what a Redis worker publishes once a second); the figures are
read from the coordinator as a ``ClusterProject``'s are from Redis:

- statistics: every worker's summed, and the job's restored ones (the coordinator's);
- tasks by where they are: waiting and delayed from the frontier (as the coordinator
  last read it, about once a second), leased and in flight from the live workers' beats,
  done from the summed statistics;
- successes, failures and pages/s over time: the summed ``task_attempts/*`` counters,
  sampled at each read into ``ClusterMonitor``'s windows; tasks in flight, latest
  outcomes and busiest slots: the live workers' beats, merged;
- rate, pause and resume: the coordinator tells every worker (each takes 1/N of the
  rate, as at the start), and a replacement worker starts so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from skitter.cluster import FAILED, SUCCEEDED, Heartbeat
from skitter.dashboard._cluster import ClusterMonitor, Totals, active_tasks, merged_slots, outcomes
from skitter.dashboard._live import SteeredProject

if TYPE_CHECKING:
    from skitter._clock import Clock
    from skitter.engine import TaskCounts
    from skitter.frontier import FrontierCounts, TaskInfo
    from skitter.scheduler import RateLimits

__all__ = ["Coordinated", "ProcessesProject"]


class Coordinated(SteeredProject, Protocol):
    """What the coordinator of a ``--processes`` crawl tells and does for the view, besides
    what every project does: every worker's summed statistics and last beats."""

    def stats(self) -> dict[str, Any]: ...

    def beats(self) -> Sequence[Heartbeat]: ...

    def set_rate(self, rate: float | None, burst: float | None = None) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class ProcessesProject:
    """The one project of a ``--processes`` crawl, read from its coordinator."""

    def __init__(self, crawl: Coordinated) -> None:
        self._crawl = crawl
        self._totals = Totals()
        self._monitor = ClusterMonitor(crawl.clock)

    @property
    def name(self) -> str:
        return self._crawl.name

    @property
    def clock(self) -> Clock:
        return self._crawl.clock

    @property
    def limits(self) -> RateLimits:
        return self._crawl.limits

    @property
    def status(self) -> str:
        return self._crawl.status

    @property
    def rate(self) -> tuple[float | None, float | None]:
        return self._crawl.rate

    @property
    def stats(self) -> Totals:
        """The crawl's statistics now (every worker's summed)."""
        totals = self._crawl.stats()
        totals.update(self._crawl.task_counts().stats())
        self._totals.values = totals
        return self._totals

    @property
    def monitor(self) -> ClusterMonitor:
        """Sampled at each read: what finished since the last read counts as now."""
        totals = self._crawl.stats()
        monitor = self._monitor
        monitor.sample(self.clock.time(), int(totals.get(SUCCEEDED, 0)), int(totals.get(FAILED, 0)))
        beats = self._crawl.beats()
        monitor.active = active_tasks(beats)
        monitor.recent = outcomes(beat.recent for beat in beats)
        monitor.failures = outcomes(beat.failures for beat in beats)
        return monitor

    async def queue_counts(self) -> FrontierCounts:
        return await self._crawl.queue_counts()

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        return self._crawl.task_counts(counts)

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]:
        return await self._crawl.failed_tasks(limit)

    async def retry_failed(self, *, domain: str | None = None, reason: str | None = None) -> int:
        return await self._crawl.retry_failed(domain=domain, reason=reason)

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int:
        return await self._crawl.requeue_bad(domain=domain, reason=reason)

    def slot_stats(self) -> list[dict[str, Any]]:
        """The workers' busiest slots (a slot lives in one worker: its owner's)."""
        return merged_slots(self._crawl.beats())

    def proxy_stats(self) -> list[dict[str, Any]]:
        """None: each worker keeps its own proxy pool (its ``proxy/...`` stats are in
        the crawl's stats)."""
        return []

    def cluster_summary(self) -> dict[str, Any]:
        """The live worker processes."""
        return {"job": "", "workers": len(self._crawl.beats()), "control_errors": []}

    def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        self._crawl.set_rate(rate, burst)

    def pause(self) -> None:
        self._crawl.pause()

    def resume(self) -> None:
        self._crawl.resume()
