"""``ProjectControl``: the live control panel of one project while it runs.

What a person (the web UI and its JSON API, ``/metrics``, a script) or the cluster's
control record (a worker's ``WorkerPresence``) reads and changes of a running project:
its status, rate and burst, a pause, failed and bad tasks queued again, queue counts,
the monitor's live view, the download slots. The crawler builds one per project, before
the run, so a dashboard can be given it at once (``crawler.control``); it shows the
project as "new" until the crawler attaches the project it built.

It lives in the engine's layer because it reads the engine's ``Project`` (its
scheduler, monitor, statistics and failure) and wakes the engine after a change;
everything above (dashboard, CLI, crawler) may import it, and the cluster, a peer of
the engine, steers it through its own ``cluster.Steered`` protocol, which this class
satisfies. Every change goes through the scheduler's own methods (``pause``,
``resume``, ``set_rate``, ``retry_failed``, ``requeue_bad``): nothing here writes the
scheduler's state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from skitter._clock import Clock
from skitter._types import CrawlStats
from skitter.downloader import ProxyPoolMiddleware
from skitter.engine._monitor import ProjectMonitor, TaskCounts
from skitter.engine._project import Project
from skitter.frontier import FrontierCounts, TaskInfo, TaskState
from skitter.scheduler import ProjectScheduler, RateLimits
from skitter.settings import SchedulerSettings, Settings

__all__ = ["ProjectControl"]


class ProjectControl:
    """Status and live control of one project (``name``), before, during and after its
    run. Methods that need the running project raise ``RuntimeError`` before it."""

    def __init__(self, name: str, settings: Settings, stats: CrawlStats, clock: Clock) -> None:
        self._name = name
        self.settings = settings
        self.clock = clock
        self._stats = stats
        self._project: Project | None = None
        self._wake: Callable[[], None] = _nothing
        self._share: Callable[[float | None, float | None], Awaitable[None]] | None = None
        #: The run report (``skitter.monitors``): a periodic run's while the crawl runs,
        #: the final one after; None without monitors.
        self.report: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"<ProjectControl {self.name} {self.status}>"

    def attach(self, project: Project, wake: Callable[[], None]) -> None:
        """The project now runs (or is about to): control it; ``wake`` tells the engine
        to look at the schedulers again after a change."""
        self._project = project
        self._wake = wake

    def share_rate(self, share: Callable[[float | None, float | None], Awaitable[None]]) -> None:
        """A worker of a distributed job: ``set_rate`` (this worker's UI) also hands the
        rate to ``share``, which writes the job's control record, so it holds for every
        worker. The record, when read back, is applied with ``apply_rate``."""
        self._share = share

    # -- reading --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The project's name: its spider's."""
        return self._project.name if self._project is not None else self._name

    @property
    def stats(self) -> CrawlStats:
        """The project's statistics (a worker's count into the job's totals too)."""
        return self._project.stats if self._project is not None else self._stats

    @property
    def status(self) -> str:
        """new (before the run), running, paused, checking (breaker probing), done,
        failed, or monitors_failed (it ran, and its monitors fail what it produced)."""
        project = self._project
        if project is None:
            return "new"
        if self.stats.get("finish_reason") is not None:
            if project.failure is not None:
                return "failed"
            return "monitors_failed" if self.stats.get("monitors/status") == "failed" else "done"
        return project.scheduler.status

    @property
    def failure(self) -> str | None:
        """Why the crawl failed (it did not, or could not, do what was asked), or None."""
        return self._project.failure if self._project is not None else None

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """(rate, burst) now; (None, None) when unlimited."""
        return self._project.scheduler.rate if self._project is not None else (None, None)

    @property
    def limits(self) -> RateLimits:
        """MAX_RATE and MAX_BURST: the most ``set_rate`` accepts."""
        own = self.settings.view(SchedulerSettings)
        return RateLimits(own.max_rate, own.max_burst)

    @property
    def monitor(self) -> ProjectMonitor | None:
        """Active tasks, recent results and failures, windowed counts (None before the
        run)."""
        return self._project.monitor if self._project is not None else None

    def slot_stats(self) -> list[dict[str, Any]]:
        """Per live download slot: in flight, queued, done, failed, concurrency, delay,
        breaker state and back-off (seconds left), for the UI and the stats."""
        now = self.clock.monotonic()
        out = []
        for key, slot in sorted(self._scheduler().slot_stats().items()):
            backoff = slot.backoff_until
            out.append(
                {
                    "slot": key,
                    "in_flight": slot.in_flight,
                    "queued": slot.queued,
                    "done": slot.done,
                    "failed": slot.failed,
                    "concurrency": slot.concurrency,
                    "delay": slot.delay,
                    "breaker": slot.breaker.value if slot.breaker is not None else None,
                    "backoff": max(0.0, backoff - now) if backoff is not None else 0.0,
                }
            )
        return out

    def proxy_stats(self) -> list[dict[str, Any]]:
        """Per proxy of PROXY_LIST: its label (never its URL), tier, up or down,
        requests, failures and blocks; empty without a proxy pool."""
        if self._project is None:
            return []
        proxies = self._project.downloader.middleware(ProxyPoolMiddleware)
        return proxies.pool.rows() if proxies is not None else []

    async def queue_counts(self) -> FrontierCounts:
        """Tasks ready, delayed and processing in the project's frontier."""
        return await self._scheduler().frontier.counts(self.clock.time())

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        """The project's tasks by where they are: waiting, delayed, leased (waiting for
        a download slot), in flight, done (see ``TaskCounts``); the frontier's part from
        ``counts``, else as the engine last looked (about once a second). All zero
        before the run."""
        if self._project is None:
            return TaskCounts()
        return self._project.task_counts(counts)

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]:
        """The latest FAILED tasks with their reasons."""
        return await self._scheduler().frontier.tasks(TaskState.FAILED, limit)

    # -- changing -------------------------------------------------------------------------
    def set_rate(self, rate: float | None, burst: float | None = None) -> Awaitable[None] | None:
        """Change the project's rate and burst now (None: unlimited, resp. 10 x rate);
        ConfigError above MAX_RATE/MAX_BURST. A worker of a distributed job returns the
        write of the job's control record (see ``share_rate``), for the caller to await."""
        self.apply_rate(rate, burst)
        return self._share(rate, burst) if self._share is not None else None

    def apply_rate(self, rate: float | None, burst: float | None = None) -> None:
        """``set_rate`` for this process only (the job's control record, as read)."""
        self._scheduler().set_rate(rate, burst)
        self._wake()

    def pause(self) -> None:
        """Dispatch nothing more until ``resume()``; running requests finish."""
        self._scheduler().pause()

    def resume(self) -> None:
        """Dispatch again (also ends a pause by the circuit breaker)."""
        self._scheduler().resume()
        self._wake()

    async def retry_failed(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue FAILED tasks again (all, or by domain or reason substring); how many."""
        count = await self._scheduler().retry_failed(domain=domain, reason=reason)
        if count:
            self._wake()
        return count

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue BAD tasks again, filtered as ``retry_failed`` (once the code that made
        them bad is fixed: a callback renamed back, say); how many."""
        count = await self._scheduler().requeue_bad(domain=domain, reason=reason)
        if count:
            self._wake()
        return count

    def _scheduler(self) -> ProjectScheduler:
        if self._project is None:
            raise RuntimeError(f"project {self.name!r} is not running yet")
        return self._project.scheduler


def _nothing() -> None:
    return None
