"""The engine: moves requests, responses and items between the components.

One dispatch loop takes leased tasks from the projects' schedulers and starts one
asyncio task per download, bounded by a semaphore (CONCURRENT_REQUESTS). A slow download
holds one permit and nothing else, so it never idles the others; a slot that is busy is
handled by the scheduler, which parks its tasks instead of handing them out.

Termination (SPEC §1): a project is finished when its start requests are exhausted, its
scheduler holds nothing (ready, delayed, parked or processing) and none of its tasks is
running — a task covers download, callback and pipelines, so a callback that yields late
keeps the crawl alive until it returns. The loop wakes on three things only: a task
finished, requests were queued, or the scheduler's next due time passed; it never polls.

Every failure of one request or callback is caught in ``_process`` (downloads) or by the
``Scraper`` (callbacks and what they yield), logged with the request and callback,
counted, and the crawl goes on. A ``FatalError`` (a feed or store that cannot take what
the crawl produced, the job's state lost, the store out of reach for too long) is the
exception: wherever it comes from, the project fails (``Project.fail``), nothing more is
dispatched for it, and the task at hand is left unsettled so that it runs again on a
resume. A task store that is only briefly out of reach (``FrontierUnavailable``) is
ridden out, wherever it shows: leasing, a task's push of its children or its ack (the
task is then left to its lease, never failed), the upkeep, the start requests. All of
them pause dispatch and back off; an outage ends when a task is settled again (or there
is nothing left to do), and one that lasts FRONTIER_OUTAGE_TIMEOUT fails the crawl,
also when leases still work but nothing can be written (Redis out of memory).
Cancellation is never swallowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from skitter._tasks import cancel_and_wait
from skitter.engine._project import Project
from skitter.engine._scraper import Scraper
from skitter.exceptions import (
    CloseSpider,
    FatalError,
    FrontierOutage,
    FrontierUnavailable,
    IgnoreRequest,
    InvalidURL,
    RequestError,
    RetryLater,
)
from skitter.frontier import Lease
from skitter.http import Request, Response, url_host
from skitter.items import is_item
from skitter.scheduler import FairShare, own_taskid
from skitter.spider import aiter_output, apply_callback_config, periodic_methods

__all__ = ["Engine"]

log = logging.getLogger("skitter.engine")


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
        self._next_project = 0
        self._outage_delay = 0.0
        #: When the current outage of the task store began (None: reachable), and how
        #: long one may last before the crawl fails (FRONTIER_OUTAGE_TIMEOUT; 0 = forever).
        self._outage_since: float | None = None
        self._outage_timeout = outage_timeout
        #: An outage met outside the dispatcher (a task's settle, the upkeep, the start
        #: requests), for the dispatcher to ride out.
        self._unavailable: FrontierUnavailable | None = None
        self._store_empty = False
        #: Workers: how long the (cluster-wide) idle state must last before the crawl
        #: ends; negative = never (wait for pushed URLs).
        self._idle_grace = idle_grace
        self._idle_since: float | None = None
        self._tg: asyncio.TaskGroup | None = None
        self._scraper = Scraper(self._enqueue, self._check_limits)

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

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    # -- main loop --------------------------------------------------------------------
    async def run(self) -> None:
        """Crawl until every project is finished or the engine is stopped; then close
        every project (pipelines, feeds, connections), also when cancelled."""
        try:
            for project in self.projects:
                try:
                    await project.open()
                except Exception as exc:
                    # Raised to the caller (a feed that cannot be opened is refused
                    # before anything is fetched), and the stats say "failed".
                    project.fail(exc)
                    raise
            async with asyncio.TaskGroup() as tg:
                self._tg = tg
                helpers = [tg.create_task(self._feed(p)) for p in self.projects]
                helpers.append(tg.create_task(self._housekeeping()))
                if self.serve:
                    for project in self.projects:
                        for method, interval in periodic_methods(project.spider):
                            helpers.append(tg.create_task(self._every(project, method, interval)))
                await self._dispatch()
                await self._drain()
                for task in helpers:
                    with contextlib.suppress(Exception):  # the TaskGroup reports it
                        await cancel_and_wait(task)
        finally:
            for project in self.projects:
                await project.close()

    async def _dispatch(self) -> None:
        while not self._stopping:
            try:
                if await self._dispatch_some():
                    return
            except FrontierUnavailable as exc:
                await self._ride_out(exc)

    async def _ride_out(self, exc: FrontierUnavailable) -> None:
        """The frontier is out of reach: dispatch nothing for a while, then try again
        (0.5 s, doubling to 5 s). Running tasks go on; their acks wait for it too. An
        outage longer than the outage timeout fails every project still running.

        The outage ends with the next task settled (``_store_works``), not with the next
        lease: Redis out of memory still hands out leases but takes no pushes, and a
        crawl that only re-downloads the same pages must not count as recovered."""
        now = time.monotonic()
        self._unavailable = None
        if self._outage_since is None:
            self._outage_since = now
            log.warning("Task store unavailable, pausing dispatch: %s", exc)
        for project in self.projects:
            project.stats.inc("engine/frontier_unavailable")
        timeout = self._outage_timeout
        if timeout > 0 and now - self._outage_since >= timeout:
            outage = FrontierOutage(
                f"the task store has been unavailable for {now - self._outage_since:.0f} s "
                f"(FRONTIER_OUTAGE_TIMEOUT is {timeout:g} s): {exc}"
            )
            for project in self.projects:
                if project.closing is None:
                    project.fail(outage)
            self._wakeup.set()
            return
        self._outage_delay = min(5.0, max(0.5, self._outage_delay * 2))
        await asyncio.sleep(self._outage_delay)

    async def _dispatch_some(self) -> bool:
        """Dispatch until nothing more can start; True once every project is finished."""
        sem = self._sem
        while not self._stopping:
            if self._unavailable is not None:
                raise self._unavailable
            await sem.acquire()
            self._wakeup.clear()
            try:
                picked = await self._pick()
            except BaseException:
                sem.release()
                raise
            if picked is not None:
                self._idle_since = None
                project, lease = picked
                project.in_flight += 1
                project.running.add(lease)
                task = self._tg.create_task(self._process(project, lease))  # type: ignore[union-attr]
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                continue
            sem.release()
            if await self._all_finished():
                return True
            if self._outage_since is not None and self._store_empty:
                self._store_works()  # an idle worker waiting for pushed URLs
            timeout = await self._next_wakeup()
            try:
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()
            except TimeoutError:
                pass
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

    def _store_unavailable(self, exc: FrontierUnavailable) -> None:
        """Met outside the dispatcher: it pauses, backs off and counts it, as if its own
        call had failed."""
        self._unavailable = exc
        self._wakeup.set()

    def _store_works(self) -> None:
        """A task was settled (or there is nothing left to do): any outage is over."""
        if self._outage_since is not None:
            log.info(
                "Task store available again after %.0f s, dispatching",
                time.monotonic() - self._outage_since,
            )
            self._outage_delay = 0.0
            self._outage_since = None

    def _maybe_hungry(self, project: Project) -> None:
        if not project.start_exhausted and project.scheduler.queued_estimate < self._low_water:
            project.hungry.set()

    async def _all_finished(self) -> bool:
        """Whether every project is finished; also notes in ``_store_empty`` whether
        each open one has queued its start requests and its store holds no task."""
        done = True
        empty = True
        for project in self.projects:
            if project.closing is None and self.serve:
                done = empty = False  # a service only ends when stopped
            elif project.closing is None:
                if (
                    project.start_exhausted
                    and project.in_flight == 0
                    and await self._scheduler_finished(project)
                ):
                    if self._idle_long_enough():
                        project.request_close("finished")
                    else:
                        done = False
                else:
                    done = empty = False
            if project.closing is not None and project.in_flight > 0:
                done = False
        self._store_empty = empty
        return done

    @staticmethod
    async def _scheduler_finished(project: Project) -> bool:
        try:
            return await project.scheduler.is_finished()
        except FatalError as exc:
            project.fail(exc)
            return False

    def _idle_long_enough(self) -> bool:
        """Nothing to do anywhere: for a worker, only after ``idle_grace`` seconds of it
        (another worker may still yield requests, or URLs may be pushed)."""
        if self._idle_grace == 0:
            return True
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        return self._idle_grace > 0 and now - self._idle_since >= self._idle_grace

    async def _next_wakeup(self) -> float | None:
        waits = []
        if self._idle_since is not None:
            waits.append(0.5)  # look at the cluster again soon
        for project in self.projects:
            if project.closing is None:
                try:
                    wait = await project.scheduler.next_wakeup()
                except FatalError as exc:
                    project.fail(exc)
                    return 0.0
                if wait is not None:
                    waits.append(wait)
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
                    except FrontierUnavailable as exc:
                        self._store_unavailable(exc)
                    except FatalError as exc:
                        project.fail(exc)
                    self._check_limits(project)
            self._wakeup.set()

    # -- start requests -------------------------------------------------------------------
    async def _feed(self, project: Project) -> None:
        """Pull start requests lazily: only while the project's queue is low.

        They come from ``spider.start()`` (Scrapy 2.13's async generator, which may yield
        items too), whose default yields what ``start_requests()`` gives.

        ``project.start_offset`` counts the start requests queued so far; a resumed job
        skips that many. A ``dont_filter`` start request gets a taskid from its position,
        so one queued again after a crash merges with itself instead of running twice.
        A worker feeds only while it holds the cluster's claim; one whose claim lapsed
        (another worker took it over) stops and waits for a turn again.
        """
        if project.start_exhausted:  # a resumed job that had queued them all
            return
        claim = project.start_claim
        try:
            while True:
                if claim is not None:
                    offset = await claim.wait_turn()
                    if offset is None:  # another worker queued them all
                        break
                    project.start_offset = offset
                outcome = await self._feed_from(project, claim)
                if outcome == "closing":
                    return  # not exhausted: a resumed job goes on from here
                if outcome == "exhausted":
                    break
                log.warning(
                    "Spider %s: another worker took the start requests over (this one's "
                    "claim lapsed at position %d); waiting for a turn again",
                    project.name,
                    project.start_offset,
                )
        except FatalError as exc:
            project.fail(exc)
            return
        project.start_exhausted = True
        self._wakeup.set()

    async def _feed_from(self, project: Project, claim: Any) -> str:
        """Queue start requests from ``project.start_offset`` on: "exhausted" when there
        are no more, "closing" when the project closes first, "lost" when the claim of a
        worker lapsed. FatalError propagates."""
        index = 0
        try:
            source = project.spider_mw.process_start_requests(aiter_output(project.spider.start()))
            async for request in source:
                if project.closing is not None:
                    return "closing"
                if index < project.start_offset:
                    index += 1
                    continue
                if isinstance(request, Request):
                    if request.dont_filter:
                        with contextlib.suppress(InvalidURL):  # enqueue reports it
                            own_taskid(request, f"s{index}")
                    await self._enqueue_patiently(project, request)
                elif is_item(request):  # Scrapy 2.13: start() may yield items too
                    await project.pipelines.process_item(request, project.spider)
                elif request is not None:
                    self._scraper.count_bad_output(project, request, "start")
                index += 1
                project.start_offset = index
                if claim is not None and not await _claim_kept(claim.progress, index):
                    return "lost"
                while (
                    project.scheduler.queued_estimate >= self._low_water and project.closing is None
                ):
                    project.hungry.clear()
                    if claim is None:
                        await project.hungry.wait()
                        continue
                    try:  # the claim is a lease: renew it while waiting
                        async with asyncio.timeout(claim.renew_every):
                            await project.hungry.wait()
                    except TimeoutError:
                        if not await _claim_kept(claim.progress, index):
                            return "lost"
        except FatalError:
            raise
        except Exception as exc:
            # What was queued is still crawled, but the run did not do what was asked.
            log.exception("Error while obtaining start requests of spider %s", project.name)
            project.stats.inc("engine/start_requests_errors")
            project.fail(
                f"start requests raised {type(exc).__name__} after {index} of them: {exc}",
                stop=False,
            )
        if claim is not None:
            await _claim_kept(claim.finished, index)
        return "exhausted"

    async def _enqueue_patiently(self, project: Project, request: Request) -> None:
        """Queue a start request, waiting out an unreachable frontier rather than
        dropping it (the dispatcher counts the wait towards the outage timeout, and
        fails the project when it is over)."""
        delay = 0.5
        while project.closing is None:
            try:
                await self._enqueue(project, [request])
                return
            except FrontierUnavailable as exc:
                self._store_unavailable(exc)
                await asyncio.sleep(delay)
                delay = min(5.0, delay * 2)

    async def _enqueue(self, project: Project, requests: list[Request]) -> None:
        if project.has_callback_config:
            for request in requests:
                apply_callback_config(request)
        await project.scheduler.enqueue(requests)
        self._wakeup.set()

    # -- periodic callbacks (serve mode) ----------------------------------------------------
    async def _every(self, project: Project, method: Callable[[], Any], interval: float) -> None:
        """Run an ``@every`` method now and then every ``interval`` seconds; what it
        yields is scheduled like start requests."""
        name = getattr(method, "__qualname__", repr(method))
        while project.closing is None:
            batch: list[Request] = []
            try:
                async for obj in aiter_output(method()):
                    if isinstance(obj, Request):
                        batch.append(obj)
                    elif is_item(obj):
                        await project.pipelines.process_item(obj, project.spider)
                    elif obj is not None:
                        self._scraper.count_bad_output(project, obj, name)
                if batch:
                    await self._enqueue(project, batch)
            except FatalError as exc:
                project.fail(exc)
                self._wakeup.set()
                return
            except FrontierUnavailable as exc:
                log.warning("Periodic callback %s: task store unavailable: %s", name, exc)
                project.stats.inc("engine/periodic_errors")
                self._store_unavailable(exc)
            except Exception:
                log.exception("Error in periodic callback %s", name)
                project.stats.inc("engine/periodic_errors")
            project.stats.inc("engine/periodic_runs")
            await asyncio.sleep(interval)

    # -- one task ---------------------------------------------------------------------
    async def _process(self, project: Project, lease: Lease) -> None:
        try:
            await self._run_task(project, lease)
        except FrontierUnavailable as exc:
            # Its ack (or nack, or its children's push) could not be written: the lease
            # expires and the task runs again, here or on another worker. Nothing lost,
            # and nothing failed; the dispatcher pauses as for any outage.
            log.warning("Task store unavailable; %s will run again: %s", lease.request, exc)
            project.stats.inc("engine/tasks_left_to_lease_expiry")
            self._store_unavailable(exc)
        except FatalError as exc:
            # Neither acked nor failed: on a resume (or on another worker) it runs again.
            project.fail(exc)
            project.stats.inc("engine/tasks_left_unsettled")
        else:
            if self._outage_since is not None:
                self._store_works()

    async def _run_task(self, project: Project, lease: Lease) -> None:
        request = lease.request
        scheduler = project.scheduler
        monitor = project.monitor
        monitor.started(lease.taskid, request.url, scheduler.slot_of(request), lease.retried + 1)
        ok, status, reason, items = False, None, "", 0
        try:
            result = await self._download(project, lease)
            if isinstance(result, Request):  # redirected: the new request replaces this one
                await self._enqueue(project, [result])
                await scheduler.complete(lease)
                ok, reason = True, f"redirected to {result.url}"
                return
            project.stats.inc("response_received_count")
            status = result.status
            if project.limits:
                self._check_limits(project)
            items = await self._scraper.handle_response(project, result)
            if project.flush_feeds_before_ack:
                project.pipelines.flush_feeds()
            await scheduler.complete(lease)
            ok = True
        except RetryLater as exc:
            reason = exc.reason
            status = exc.response.status if exc.response is not None else None
            items = await self._retry_or_give_up(project, lease, exc)
        # The errback runs before the task is settled: if what it yields cannot be
        # queued (the store unavailable), the task is left to its lease and runs again,
        # instead of being settled with its children lost.
        except IgnoreRequest as exc:
            reason = f"ignored: {exc.reason}"
            project.stats.inc("engine/ignored_requests")
            log.debug("Ignored %s: %s", request, exc.reason)
            await self._scraper.errback(project, request, exc)
            await scheduler.bad(lease, reason)
        except InvalidURL as exc:
            reason = str(exc)
            log.warning("Bad URL %s: %s", request, exc)
            await self._scraper.errback(project, request, exc)
            await scheduler.bad(lease, reason)
        except RequestError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            log.error("Error downloading %s: %s", request, exc)
            await self._scraper.errback(project, request, exc)
            await scheduler.fail(lease, reason)
        except CloseSpider as exc:
            project.request_close(exc.reason)
            await scheduler.complete(lease)
            ok = True
        except FrontierUnavailable:
            reason = "task store unavailable"
            raise
        except FatalError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise
        except Exception as exc:  # a bug in a middleware: contain it to this request
            reason = f"{type(exc).__name__}: {exc}"
            log.exception("Unexpected error processing %s", request)
            project.stats.inc(f"engine/unexpected_errors/{type(exc).__name__}")
            await scheduler.fail(lease, reason)
        finally:
            monitor.finished(
                lease.taskid, request.url, ok=ok, status=status, reason=reason, items=items
            )
            project.in_flight -= 1
            project.running.discard(lease)
            self._sem.release()
            self._wakeup.set()

    async def _download(self, project: Project, lease: Lease) -> Response | Request:
        """Fetch through the middlewares, and tell the task's slot how it went: latency
        (for AutoThrottle), status and Retry-After (for back-off), success (for the
        slot's breaker); and robots.txt's Crawl-delay once it is known."""
        started = time.monotonic()
        status: int | None = None
        retry_after: float | None = None
        ok = False
        try:
            result = await project.downloader.fetch(lease.request)
            if isinstance(result, Response):
                status = result.status
            ok = True
            return result
        except RetryLater as exc:
            if exc.response is not None:
                status = exc.response.status
            retry_after = exc.delay
            raise
        finally:
            scheduler = project.scheduler
            await scheduler.download_finished(
                lease,
                latency=time.monotonic() - started,
                status=status,
                retry_after=retry_after,
                ok=ok,
            )
            robots = project.robots
            if robots is not None:
                request = lease.request
                scheduler.set_crawl_delay(
                    scheduler.slot_of(request), robots.crawl_delay(url_host(request.url))
                )

    async def _retry_or_give_up(self, project: Project, lease: Lease, exc: RetryLater) -> int:
        """Retry by the table, or hand the failure to the spider and then mark the task
        FAILED (in that order, as for the errbacks above); the items it yielded."""
        request = lease.request
        scheduler = project.scheduler
        if not scheduler.retry_policy.gives_up(lease.retried, request.retries):
            await scheduler.retry(lease, exc.reason, exc.delay)
            log.debug("Retrying %s (failed %d times): %s", request, lease.retried + 1, exc.reason)
            return 0
        log.error(
            "Gave up retrying %s (failed %d times): %s", request, lease.retried + 1, exc.reason
        )
        if exc.response is not None:
            # Out of retries on a status: the spider still gets the last response, and
            # the HTTP error filter decides whether its callback or errback sees it.
            project.stats.inc("response_received_count")
            items = await self._scraper.handle_response(project, exc.response)
        else:
            items = await self._scraper.errback(project, request, exc.cause or exc)
        await scheduler.retry(lease, exc.reason, exc.delay)  # out of retries: FAILED
        return items

    def _check_limits(self, project: Project) -> None:
        """The CLOSESPIDER_* settings, checked where their counters move."""
        stats = project.stats
        for key, limit, reason in project.limits:
            if stats.get(key, 0) >= limit:
                project.request_close(reason)
        timeout = project.close_after
        if timeout and time.monotonic() - project.started_at >= timeout:
            project.request_close("closespider_timeout")


async def _claim_kept(record: Callable[[int], Any], offset: int) -> bool:
    """Record start-request progress on the cluster's claim: False once another worker
    holds it. Redis out of reach is ridden out (the claim may lapse meanwhile: the next
    record tells)."""
    try:
        return bool(await record(offset))
    except FrontierUnavailable:
        return True
