"""The start-request feeder: one per project, pulling start requests lazily.

They come from ``spider.start()`` (Scrapy 2.13's async generator, which may yield items
too), whose default yields what ``start_requests()`` gives, and only while the project's
queue is low (``project.hungry``), so a spider with a million start URLs never holds
them all.

``project.start_offset`` counts the start requests queued so far; a resumed job skips
that many. Each start request is marked ``meta["is_start_request"]`` (Scrapy's key),
which is how its outcome is recognized wherever it runs (``_starts``). A ``dont_filter``
start request gets a taskid from its position (``own_taskid``, the scheduler's rule), so
one queued again after a crash merges with itself instead of running twice.

A worker of a distributed crawl feeds only while it holds the job's claim on the start
requests: a ``FeedClaim``, given by the composition (``skitter.cluster.StartClaim``; the
engine never imports the cluster). One whose claim lapsed (another worker took it over)
stops and waits for a turn again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from skitter.engine._project import Project
from skitter.engine._starts import START_META
from skitter.exceptions import FatalError, FrontierUnavailable, InvalidURL
from skitter.http import Request
from skitter.items import is_item
from skitter.pipelines import MediaPending
from skitter.scheduler import own_taskid
from skitter.spider import aiter_output

__all__ = ["FeedClaim", "StartFeeder"]

log = logging.getLogger("skitter.engine")


class FeedClaim(Protocol):
    """The right to feed a job's start requests, held by one worker at a time.

    A lease: renewed by every ``progress`` and, while the feeder waits for the queue to
    drain, every ``renew_every`` seconds. ``progress`` and ``finished`` return False
    once another worker holds the claim (nothing changed then)."""

    renew_every: float

    async def wait_turn(self) -> int | None:
        """Block until this worker holds the claim: the offset to go on from; None when
        another worker queued them all."""
        ...

    async def progress(self, offset: int) -> bool:
        """``offset`` start requests are queued; renews the claim."""
        ...

    async def finished(self, offset: int) -> bool:
        """All ``offset`` start requests are queued; gives the claim up."""
        ...


class StartFeeder:
    """Feeds one project's start requests to its scheduler."""

    def __init__(
        self,
        project: Project,
        *,
        enqueue: Callable[[Project, list[Request]], Awaitable[None]],
        bad_output: Callable[[Project, object, str], None],
        store_unavailable: Callable[[FrontierUnavailable], None],
        low_water: int,
        claim: FeedClaim | None = None,
    ) -> None:
        self._project = project
        self._enqueue = enqueue
        self._bad_output = bad_output
        self._store_unavailable = store_unavailable
        self._low_water = low_water
        self._claim = claim

    async def run(self) -> bool:
        """Feed until the start requests are exhausted (then ``project.start_exhausted``,
        and True) or the project closes; a FatalError fails the project."""
        project = self._project
        if project.start_exhausted:  # a resumed job that had queued them all
            return False
        claim = self._claim
        first: int | None = None  # where this process began queueing
        try:
            while True:
                if claim is not None:
                    offset = await claim.wait_turn()
                    if offset is None:  # another worker queued them all
                        break
                    project.start_offset = offset
                if first is None:
                    first = project.start_offset
                outcome = await self._feed_from()
                if outcome == "closing":
                    return False  # not exhausted: a resumed job goes on from here
                if outcome == "exhausted":
                    project.fed_every_start = first == 0
                    break
                first = -1  # another worker queued some of them meanwhile
                log.warning(
                    "Spider %s: another worker took the start requests over (this one's "
                    "claim lapsed at position %d); waiting for a turn again",
                    project.name,
                    project.start_offset,
                )
        except FatalError as exc:
            project.fail(exc)
            return False
        project.start_exhausted = True
        return True

    async def _feed_from(self) -> str:
        """Queue start requests from ``project.start_offset`` on: "exhausted" when there
        are no more, "closing" when the project closes first, "lost" when the claim
        lapsed. FatalError propagates."""
        project = self._project
        claim = self._claim
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
                    request.meta.setdefault(START_META, True)
                    if request.dont_filter:
                        with contextlib.suppress(InvalidURL):  # enqueue reports it
                            own_taskid(request, f"s{index}")
                    await self._enqueue_patiently(request)
                    project.start_requests_queued += 1
                elif is_item(request):  # Scrapy 2.13: start() may yield items too
                    result = await project.pipelines.process_item(request, project.spider)
                    if result.__class__ is MediaPending:
                        for media in result.requests:
                            await self._enqueue_patiently(media)
                elif request is not None:
                    self._bad_output(project, request, "start")
                index += 1
                project.start_offset = index
                if claim is not None and not await _claim_kept(claim.progress, index):
                    return "lost"
                if not await self._wait_until_hungry(index):
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

    async def _wait_until_hungry(self, index: int) -> bool:
        """Wait while the queue is full enough (renewing the claim meanwhile); False
        when the claim lapsed."""
        project = self._project
        claim = self._claim
        while project.scheduler.queued_estimate >= self._low_water and project.closing is None:
            project.hungry.clear()
            if claim is None:
                await project.hungry.wait()
                continue
            try:  # the claim is a lease: renew it while waiting
                async with asyncio.timeout(claim.renew_every):
                    await project.hungry.wait()
            except TimeoutError:
                if not await _claim_kept(claim.progress, index):
                    return False
        return True

    async def _enqueue_patiently(self, request: Request) -> None:
        """Queue a start request, waiting out an unreachable frontier rather than
        dropping it (the dispatcher counts the wait towards the outage timeout, and
        fails the project when it is over)."""
        project = self._project
        delay = 0.5
        while project.closing is None:
            try:
                await self._enqueue(project, [request])
                return
            except FrontierUnavailable as exc:
                self._store_unavailable(exc)
                await asyncio.sleep(delay)
                delay = min(5.0, delay * 2)


async def _claim_kept(record: Callable[[int], Awaitable[bool]], offset: int) -> bool:
    """Record start-request progress on the claim: False once another worker holds it.
    Redis out of reach is ridden out (the claim may lapse meanwhile: the next record
    tells)."""
    try:
        return bool(await record(offset))
    except FrontierUnavailable:
        return True
