"""One task, from download to settle: the engine starts one of these per lease.

The download's report goes to the scheduler (``record``); how the task ended is decided
by ``classify`` (``_outcome``) and carried out here, in one place (``_apply``): count,
log, let the spider hear of it (callback or errback, through the ``Scraper``), settle
the task (ack, retry, FAILED, BAD); the monitor hears of every end. What went wrong
while applying a result (a callback's children that cannot be queued, say) is
classified in turn; what goes wrong applying an error is not: the errback runs before
the task is settled, so if what it yields cannot be queued the task is left to its
lease and runs again, its children not lost.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial

from skitter.engine._outage import OutageRider
from skitter.engine._outcome import Kind, Verdict, classify
from skitter.engine._project import Project
from skitter.engine._scraper import TASKID, Scraper
from skitter.engine._starts import START_META, start_ended
from skitter.exceptions import FatalError, FrontierUnavailable
from skitter.frontier import Lease
from skitter.http import Request, Response
from skitter.pipelines import MEDIA_META
from skitter.signals import response_received

__all__ = ["TaskRunner"]

log = logging.getLogger("skitter.engine")

#: Outcomes whose error goes to the request's errback: with one, the spider handles the
#: failure, so it is not the crawl's ERROR (Scrapy logs nothing then).
_HANDLED_BY_ERRBACK = frozenset({Kind.FAILED, Kind.GIVE_UP})


class TaskRunner:
    """Runs tasks for the engine; stateless between them."""

    def __init__(
        self,
        scraper: Scraper,
        outage: OutageRider,
        enqueue: Callable[[Project, list[Request]], Awaitable[None]],
        done: Callable[[Project, Lease], None],
    ) -> None:
        self._scraper = scraper
        self._outage = outage
        self._enqueue = enqueue
        #: The engine's bookkeeping once a task ended, before any outage is reported.
        self._done = done

    async def run(self, project: Project, lease: Lease) -> None:
        """Run the task of ``lease`` to its end; what it could not settle is reported
        (an outage) or fails the project (a FatalError), never raised."""
        try:
            await self._run_task(project, lease)
        except FrontierUnavailable as exc:
            # Its ack (or nack, or its children's push) could not be written: the lease
            # expires and the task runs again, here or on another worker. Nothing lost,
            # and nothing failed; the dispatcher pauses as for any outage.
            log.warning("Task store unavailable; %s will run again: %s", lease.request, exc)
            project.stats.inc("engine/tasks_left_to_lease_expiry")
            self._outage.report(exc)
        except FatalError as exc:
            # Neither acked nor failed: on a resume (or on another worker) it runs again.
            project.fail(exc)
            project.stats.inc("engine/tasks_left_unsettled")
        else:
            if self._outage.since is not None:
                self._outage.over()

    async def _run_task(self, project: Project, lease: Lease) -> None:
        """Download, classify how it ended, apply that; the monitor hears of it. An
        exception while applying a result is classified in turn, one while applying an
        error is raised on (see the module's docstring)."""
        request = lease.request
        scheduler = project.scheduler
        monitor = project.monitor
        if project.pipelines.sinks:
            TASKID.set(lease.taskid)  # this task's own context: its items' origin
        monitor.started(
            lease.taskid, request.url, scheduler.slot_of(request), lease.retried + 1, request
        )
        verdict: Verdict | None = None
        status: int | None = None
        ok, items = False, 0
        try:
            result = await project.downloader.download(request, partial(scheduler.record, lease))
            verdict = classify(result)
            status = verdict.status
            items = await self._apply(project, lease, verdict)
            ok = verdict.ok
        except Exception as exc:
            retried = lease.retried
            if request.retries is None and request.meta:
                _own_retry_times(request)
            verdict = classify(
                exc,
                retried=retried,
                out_of_retries=scheduler.retry_policy.gives_up(retried, request.retries),
                status=status,
            )
            if verdict.kind is Kind.UNSETTLED:
                raise
            items = await self._apply(project, lease, verdict)
            ok = verdict.ok
        finally:
            monitor.finished(
                lease.taskid,
                request.url,
                ok=ok,
                status=verdict.status if verdict is not None else None,
                reason=verdict.reason if verdict is not None else "",
                items=items,
            )
            self._done(project, lease)

    async def _apply(self, project: Project, lease: Lease, verdict: Verdict) -> int:
        """Do what ``classify`` decided, in this order: count, log, let the spider hear
        of it, settle the task. The items the spider yielded."""
        for key in verdict.counts:
            project.stats.inc(key)
        line = verdict.log
        formatted = project.pipelines.formatted
        if (
            formatted is not None
            and verdict.kind in _HANDLED_BY_ERRBACK
            and not lease.request.errback
        ):
            formatted.download_error(verdict.error, lease.request, project.spider, verdict.reason)
        elif line is not None:
            exc_info = verdict.error if line.traceback else None
            level = project.give_up_level if verdict.kind is Kind.GIVE_UP else line.level
            if (
                level >= logging.ERROR
                and verdict.kind in _HANDLED_BY_ERRBACK
                and lease.request.errback is not None
            ):
                level = logging.DEBUG  # the spider's errback handles it, as in Scrapy
            log.log(level, line.message, lease.request, *line.args, exc_info=exc_info)
        scheduler = project.scheduler
        scraper = self._scraper
        kind = verdict.kind
        items = 0
        if kind in _ENDS_WITHOUT_RESPONSE and _is_start(lease.request, verdict):
            await start_ended(project, lease.request, verdict.reason, bug=kind is Kind.BUG)
        if kind is Kind.RESPONSE:
            assert verdict.response is not None
            if project.limits:
                project.check_limits()
            if response_received in project.signals.live:
                await _received(project, verdict.response)
            items = await scraper.handle_response(project, verdict.response)
            if project.flush_feeds_before_ack:
                await project.pipelines.flush()
            await scheduler.complete(lease)
        elif kind is Kind.REDIRECT:
            redirect = verdict.redirect
            assert redirect is not None
            if redirect.meta and MEDIA_META in redirect.meta:
                # A link of an item's media chain: its own taskid, so that it never
                # merges with another item's request for the same URL (its item lost).
                redirect.taskid = f"{lease.request.taskid}>{redirect.meta['redirect_times']}"
            await self._enqueue(project, [redirect])
            await scheduler.complete(lease)
        elif kind is Kind.RETRY:
            await scheduler.retry(lease, verdict.reason, verdict.retry_delay, verdict.counted_as)
        elif kind is Kind.GIVE_UP:
            # Out of retries: the spider hears of it, then the retry marks it FAILED.
            if verdict.response is not None:
                if response_received in project.signals.live:
                    await _received(project, verdict.response)
                items = await scraper.handle_response(project, verdict.response)
            else:
                assert verdict.error is not None
                items = await scraper.errback(project, lease.request, verdict.error)
            if items and project.flush_feeds_before_ack:
                await project.pipelines.flush()  # FAILED next: its items first
            await scheduler.retry(lease, verdict.reason, verdict.retry_delay, verdict.counted_as)
        elif kind is Kind.CLOSE_SPIDER:
            project.request_close(verdict.close_reason)
            await scheduler.complete(lease)
        elif kind is Kind.BUG:
            await scheduler.fail(lease, verdict.reason)
        else:  # IGNORED, BAD_URL, FAILED: the errback hears of it first
            assert verdict.error is not None
            items = await scraper.errback(project, lease.request, verdict.error)
            if items and project.flush_feeds_before_ack:
                await project.pipelines.flush()
            if kind is Kind.FAILED:
                await scheduler.fail(lease, verdict.reason)
            else:
                await scheduler.bad(lease, verdict.reason)
        return items


#: Ends of a task that a start request's record hears of here; a response (also the
#: last one given up on) is the scraper's to judge, as the spider middlewares see it.
_ENDS_WITHOUT_RESPONSE = frozenset(
    {Kind.GIVE_UP, Kind.IGNORED, Kind.BAD_URL, Kind.FAILED, Kind.BUG}
)


def _is_start(request: Request, verdict: Verdict) -> bool:
    meta = request.meta
    return bool(meta and meta.get(START_META)) and verdict.response is None


async def _received(project: Project, response: Response) -> None:
    await project.signals.send_catch_log_async(
        response_received, response=response, request=response.request, spider=project.spider
    )


def _own_retry_times(request: Request) -> None:
    """Scrapy's ``meta["max_retry_times"]``: the request's own number of retries."""
    own = request.meta.get("max_retry_times")
    if own is not None:
        request.retries = int(own)
