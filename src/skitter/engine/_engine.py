"""The engine: moves requests, responses and items between the components.

One dispatch loop takes leased tasks from the projects' schedulers and starts one
asyncio task per download, bounded by a semaphore (CONCURRENT_REQUESTS). A slow download
holds one permit and nothing else, so it never idles the others; a slot that is busy is
handled by the scheduler, which parks its tasks instead of handing them out.

Termination: a project is finished when its start requests are exhausted, its
scheduler holds nothing (ready, delayed, parked or processing) and none of its tasks is
running — a task covers download, callback and pipelines, so a callback that yields late
keeps the crawl alive until it returns. The loop wakes on three things only: a task
finished, requests were queued, or the scheduler's next due time passed; it never polls.

Every failure of one request or callback is caught, logged with the request and
callback, counted, and the crawl goes on: a ``TaskRunner`` (``_task``) runs each task,
``classify`` (``_outcome``, a pure function) decides how it ended; callbacks and what
they yield are the ``Scraper``'s. A ``FatalError`` (a feed or store that cannot take what the
crawl produced, the job's state lost, the store out of reach for too long) fails the
project wherever it comes from (``Project.fail``): nothing more is dispatched for it, and
the task at hand is left unsettled so that it runs again on a resume. A task store only
briefly out of reach (``FrontierUnavailable``) is ridden out (``_outage``): the task at
hand is left to its lease, never failed. Cancellation is never swallowed.

Start requests come from one ``StartFeeder`` per project (``_feeder``), ``@every``
callbacks from ``_periodic``; the engine reads the time from an injected ``Clock``.

Scrapy's signals go through each project's ``SignalManager`` (``crawler.signals``) where
Scrapy sends them; each send is behind a check that the signal has a receiver. An idle
project hears spider_idle before it closes (``_idle``); ``crawl`` and ``close_spider``
are Scrapy's ``crawler.engine`` methods its handlers call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter._tasks import cancel_and_wait
from skitter.engine._feeder import StartFeeder
from skitter.engine._idle import IdleGrace, spider_idle_verdict
from skitter.engine._outage import OutageRider
from skitter.engine._periodic import run_every
from skitter.engine._project import Project
from skitter.engine._scraper import Scraper
from skitter.engine._scrapy_downloader import EngineDownloader
from skitter.engine._task import TaskRunner
from skitter.exceptions import FatalError, FrontierUnavailable
from skitter.frontier import Lease
from skitter.http import Request
from skitter.scheduler import FairShare
from skitter.signals import engine_started, engine_stopped, request_dropped, request_scheduled
from skitter.spider import apply_callback_config, periodic_methods

__all__ = ["Engine"]

log = logging.getLogger("skitter.engine")

#: Seconds before an idle spider kept open by DontCloseSpider hears spider_idle again.
IDLE_RECHECK = 1.0


class Engine:
    """Runs projects to completion (``crawl`` mode) on the current event loop."""

    def __init__(
        self,
        projects: Sequence[Project],
        *,
        concurrency: int,
        shutdown_timeout: float = 30.0,
        housekeeping_interval: float = 1.0,
        serve: bool = False,
        fair_share: FairShare | None = None,
        idle_grace: float = 0.0,
        outage_timeout: float = 600.0,
        clock: Clock | None = None,
    ) -> None:
        if not projects:
            raise ValueError("the engine needs at least one project")
        self.projects = list(projects)
        self.serve = serve
        self._fair = fair_share if fair_share is not None else FairShare()
        self._by_name = {project.name: project for project in self.projects}
        if len(self._by_name) != len(self.projects):
            raise ValueError("two projects have the same spider name")
        self._sem = asyncio.Semaphore(concurrency)
        self._low_water = max(2 * concurrency, 64)
        self._shutdown_timeout = shutdown_timeout
        self._housekeeping_interval = housekeeping_interval
        self._wakeup = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._clock: Clock = clock if clock is not None else SystemClock()
        #: The task store's reachability (FRONTIER_OUTAGE_TIMEOUT; 0 = forever).
        self._outage = OutageRider(self._clock, outage_timeout, self._wakeup.set)
        self._store_empty = False
        #: Workers: how long the (cluster-wide) idle state must last before the crawl ends.
        self._idle = IdleGrace(idle_grace, self._clock)
        self._tg: asyncio.TaskGroup | None = None
        #: A spider_idle handler kept a project open (DontCloseSpider): look again soon.
        self._idle_held = False
        self._scraper = Scraper(self._enqueue, Project.check_limits)
        self._runner = TaskRunner(self._scraper, self._outage, self._enqueue, self._task_done)

    downloader = EngineDownloader()  # Scrapy's engine.downloader, for plug-ins

    # -- control ----------------------------------------------------------------------
    def stop(self, reason: str = "shutdown") -> None:
        """Stop scheduling; running tasks may finish within the shutdown timeout."""
        self._stopping = True
        for project in self.projects:
            project.request_close(reason)
        self._wakeup.set()

    def wake(self) -> None:
        """Re-check the schedulers now (after a resume or a rate change, say)."""
        self._wakeup.set()

    def crawl(self, request: Request, spider: Any = None) -> None:
        """Queue ``request`` for ``spider``'s project (Scrapy's ``engine.crawl``: what a
        spider_idle handler or an extension calls). The project stays open until it is
        queued; the spider may be left out when the engine runs one project."""
        project = self._project_of(spider)
        tg = self._tg
        if tg is None:
            raise RuntimeError("engine.crawl() is for a running engine")
        project.in_flight += 1  # not finished while the request is on its way
        task = tg.create_task(self._push(project, request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, project: Project, request: Request) -> None:
        try:
            await self._enqueue(project, [request])
        except FrontierUnavailable as exc:
            self._outage.report(exc)
        except FatalError as exc:
            project.fail(exc)
        except Exception:  # a request that cannot be queued: that request's loss only
            log.exception("Cannot queue %s given to engine.crawl()", request)
        finally:
            project.in_flight -= 1
            self._wakeup.set()

    def close_spider(self, spider: Any = None, reason: str = "cancelled") -> None:
        """Close ``spider``'s project gracefully (Scrapy's ``engine.close_spider``)."""
        self._project_of(spider).request_close(reason)
        self._wakeup.set()

    def _project_of(self, spider: Any) -> Project:
        if spider is None and len(self.projects) == 1:
            return self.projects[0]
        for project in self.projects:
            if project.spider is spider:
                return project
        raise ValueError(f"{spider!r} is not a spider this engine runs")

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    # -- main loop --------------------------------------------------------------------
    async def run(self) -> None:
        """Crawl until every project is finished or the engine is stopped; then close
        every project (pipelines, feeds, connections), also when cancelled."""
        started = False
        try:
            for project in self.projects:
                try:
                    await project.open()
                except Exception as exc:
                    # Raised to the caller (a feed that cannot be opened is refused
                    # before anything is fetched), and the stats say "failed".
                    project.fail(exc)
                    raise
            started = True
            for project in self.projects:
                if engine_started in project.signals.live:
                    await project.signals.send_catch_log_async(engine_started)
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                helpers = [tg.create_task(self._feed(p)) for p in self.projects]
                helpers.append(tg.create_task(self._housekeeping()))
                if self.serve:
                    helpers += [tg.create_task(every) for every in self._periodic()]
                await self._dispatch()
                await self._drain()
                for task in helpers:
                    with contextlib.suppress(Exception):  # the TaskGroup reports it
                        await cancel_and_wait(task)
        finally:
            for project in self.projects:
                await project.close()
            for project in self.projects:
                if started and engine_stopped in project.signals.live:
                    await project.signals.send_catch_log_async(engine_stopped)

    async def _dispatch(self) -> None:
        while not self._stopping:
            try:
                if await self._dispatch_some():
                    return
            except FrontierUnavailable as exc:
                await self._outage.ride_out(exc, self.projects)

    async def _dispatch_some(self) -> bool:
        """Dispatch until nothing more can start; True once every project is finished."""
        sem = self._sem
        outage = self._outage
        while not self._stopping:
            outage.raise_pending()
            await sem.acquire()
            self._wakeup.clear()
            try:
                picked = await self._pick()
            except BaseException:
                sem.release()
                raise
            if picked is not None:
                self._idle.busy()
                project, lease = picked
                project.in_flight += 1
                project.running.add(lease)
                task = self._tg.create_task(self._runner.run(project, lease))  # type: ignore[union-attr]
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                continue
            sem.release()
            if await self._all_finished():
                return True
            if outage.since is not None and self._store_empty:
                outage.over()  # an idle worker waiting for pushed URLs
            timeout = await self._next_wakeup()
            try:
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()
            except TimeoutError:
                for project in self.projects:  # woken by the clock: CLOSESPIDER_TIMEOUT?
                    if project.closing is None:
                        project.check_limits()
        return False

    async def _pick(self) -> tuple[Project, Lease] | None:
        """The next dispatchable task. With several projects, fair share decides whose
        turn it is; a project that cannot dispatch now (busy slots, empty bucket, paused)
        is skipped for this round."""
        projects = self.projects
        if len(projects) == 1:
            project = projects[0]
            if project.closing is not None:
                return None
            lease = await self._next_request(project)
            self._maybe_hungry(project)
            return (project, lease) if lease is not None else None
        backlogs = {
            p.name: max(1, p.scheduler.queued_estimate) for p in projects if p.closing is None
        }
        while backlogs:
            name = self._fair.pick(backlogs)
            if name is None:
                return None
            project = self._by_name[name]
            lease = await self._next_request(project)
            self._maybe_hungry(project)
            if lease is not None:
                self._fair.record(name)
                return project, lease
            del backlogs[name]
        return None

    @staticmethod
    async def _next_request(project: Project) -> Lease | None:
        try:
            return await project.scheduler.next_request()
        except FatalError as exc:
            project.fail(exc)
            return None

    def _task_done(self, project: Project, lease: Lease) -> None:
        project.in_flight -= 1
        project.running.discard(lease)
        self._sem.release()
        self._wakeup.set()

    def _maybe_hungry(self, project: Project) -> None:
        if not project.start_exhausted and project.scheduler.queued_estimate < self._low_water:
            project.hungry.set()

    async def _all_finished(self) -> bool:
        """Whether every project is finished; also notes in ``_store_empty`` whether
        each open one has queued its start requests and its store holds no task."""
        done = True
        empty = True
        self._idle_held = False
        for project in self.projects:
            if project.closing is None and self.serve:
                done = empty = False  # a service only ends when stopped
            elif project.closing is None:
                if (
                    project.start_exhausted
                    and project.in_flight == 0
                    and await self._scheduler_finished(project)
                ):
                    if not self._idle.long_enough():
                        done = False
                    elif await self._still_idle(project):
                        project.request_close("finished")
                    elif project.closing is None:  # kept open, or given more work
                        done = empty = False
                else:
                    done = empty = False
            if project.closing is not None and project.in_flight > 0:
                done = False
        self._store_empty = empty
        return done

    async def _still_idle(self, project: Project) -> bool:
        """Whether an idle project may close: its spider_idle handlers neither kept it
        open (DontCloseSpider), nor closed it (CloseSpider), nor gave it more work."""
        verdict = await spider_idle_verdict(project)
        if verdict is None:
            return False  # closed by a handler, with the handler's reason
        if not verdict:
            self._idle_held = True
            return False
        return project.in_flight == 0 and await self._scheduler_finished(project)

    @staticmethod
    async def _scheduler_finished(project: Project) -> bool:
        try:
            return await project.scheduler.is_finished()
        except FatalError as exc:
            project.fail(exc)
            return False

    async def _next_wakeup(self) -> float | None:
        waits = []
        if self._idle.since is not None:
            waits.append(0.5)  # look at the cluster again soon
        if self._idle_held:
            waits.append(IDLE_RECHECK)
        for project in self.projects:
            if project.closing is None:
                try:
                    wait = await project.scheduler.next_wakeup()
                except FatalError as exc:
                    project.fail(exc)
                    return 0.0
                if wait is not None:
                    waits.append(wait)
                left = project.time_left()
                if left is not None:
                    waits.append(left)
        return min(waits) if waits else None

    async def _drain(self) -> None:
        """After a stop: let running tasks finish, up to the shutdown timeout."""
        running = [task for task in self._tasks if not task.done()]
        if not running:
            return
        log.info(
            "Waiting up to %.0f s for %d running requests", self._shutdown_timeout, len(running)
        )
        _done, pending = await asyncio.wait(running, timeout=self._shutdown_timeout)
        for task in pending:
            with contextlib.suppress(Exception):  # the TaskGroup reports it
                await cancel_and_wait(task)
        if pending:
            log.warning("Cancelled %d requests still running at shutdown", len(pending))

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(self._housekeeping_interval)
            for project in self.projects:
                if project.closing is None:
                    try:
                        await project.scheduler.maintain(project.running)
                        await project.look()
                    except FrontierUnavailable as exc:
                        self._outage.report(exc)
                    except FatalError as exc:
                        project.fail(exc)
                    project.check_limits()
            self._wakeup.set()

    # -- start requests and periodic callbacks -------------------------------------------
    def _periodic(self) -> list[Coroutine[Any, Any, None]]:
        """A service's ``@every`` callbacks, one coroutine each."""
        return [
            run_every(
                project,
                method,
                interval,
                enqueue=self._enqueue,
                bad_output=self._scraper.count_bad_output,
                store_unavailable=self._outage.report,
                wake=self._wakeup.set,
            )
            for project in self.projects
            for method, interval in periodic_methods(project.spider)
        ]

    async def _feed(self, project: Project) -> None:
        feeder = StartFeeder(
            project,
            enqueue=self._enqueue,
            bad_output=self._scraper.count_bad_output,
            store_unavailable=self._outage.report,
            low_water=self._low_water,
            claim=project.start_claim,
        )
        if await feeder.run():
            self._wakeup.set()

    async def _enqueue(self, project: Project, requests: list[Request]) -> None:
        if project.has_callback_config:
            for request in requests:
                apply_callback_config(request)
        live = project.signals.live
        if live and (request_scheduled in live or request_dropped in live):
            outcomes: list[tuple[Request, bool]] = []
            await project.scheduler.enqueue(requests, outcomes=outcomes)
            await self._signal_scheduled(project, outcomes)
        else:
            await project.scheduler.enqueue(requests)
        self._wakeup.set()

    @staticmethod
    async def _signal_scheduled(project: Project, outcomes: list[tuple[Request, bool]]) -> None:
        # Scrapy's order: request_scheduled for every request handed to the scheduler,
        # then request_dropped for one the dupe filter turned away.
        signals, spider = project.signals, project.spider
        for request, queued in outcomes:
            if request_scheduled in signals.live:
                await signals.send_catch_log_async(
                    request_scheduled, request=request, spider=spider
                )
            if not queued and request_dropped in signals.live:
                await signals.send_catch_log_async(request_dropped, request=request, spider=spider)
