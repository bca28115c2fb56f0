"""A worker process of ``skitter crawl --processes N``.

It is a one-process crawl with three things swapped: its frontier is the coordinator's
(``RemoteFrontier``), its items go to the coordinator with the ack of their task (it
has no feed of its own), and the outcomes of start requests are recorded there. Only
worker 0 feeds the start requests. A worker whose coordinator is gone ends at once:
it holds nothing that would outlive it (its unsettled tasks run again).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from skitter._tasks import Background, periodic
from skitter._types import StartOutcomes
from skitter.crawler import Crawler, run_crawlers
from skitter.engine import Project
from skitter.frontier import Lease
from skitter.frontier.remote import FrameChannel, RemoteFrontier
from skitter.multiproc._coordinator import item_dict
from skitter.signals import item_scraped

__all__ = ["WorkerCrawler", "run_worker"]

#: Seconds between two reports of a worker's statistics.
REPORT_EVERY = 0.5


class RemoteStartRecord:
    """The outcomes of start requests, kept by the coordinator for the whole crawl."""

    def __init__(self, channel: FrameChannel) -> None:
        self._channel = channel

    async def accepted(self) -> None:
        await self._channel.call("start_accepted")

    async def refused(self, url: str, reason: str) -> None:
        await self._channel.call("start_refused", url, reason)

    async def outcomes(self) -> StartOutcomes:
        accepted, refused, listed = await self._channel.call("start_outcomes")
        outcomes = StartOutcomes()
        outcomes.accepted, outcomes.refused = accepted, refused
        outcomes.listed = [(url, reason) for url, reason in listed]
        return outcomes


class RemoteStartClaim:
    """Worker 0's right to feed the start requests, the offset kept by the coordinator
    (recorded with each start request queued, so a replacement goes on from there)."""

    renew_every = 3600.0  # one worker feeds: nothing to renew

    def __init__(self, channel: FrameChannel) -> None:
        self._channel = channel

    async def wait_turn(self) -> int | None:
        offset: int | None = await self._channel.call("start_turn")
        return offset

    async def progress(self, offset: int) -> bool:
        await self._channel.call("start_progress", offset, False)
        return True

    async def finished(self, offset: int) -> bool:
        await self._channel.call("start_progress", offset, True)
        return True


class WorkerCrawler(Crawler):
    """A ``Crawler`` whose tasks and items live in the coordinator (see the module)."""

    channel: FrameChannel
    index: int = 0
    #: The workers of the crawl: each takes this share of its RATE and burst (whichever
    #: holds tasks, the crawl never goes faster than asked).
    share: int = 1
    welcome: dict[str, Any]

    def build(self, mode: str = "crawl") -> Project:
        project = super().build(mode)
        self._items: dict[str | None, list[Any]] = {}
        project.scheduler.frontier = RemoteFrontier(
            self.channel, project.spider, extra=self._take_items
        )
        project.starts = RemoteStartRecord(self.channel)
        project.start_claim = RemoteStartClaim(self.channel)
        rate, burst = project.scheduler.rate
        if rate is not None and self.share > 1:
            project.scheduler.set_rate(rate / self.share, burst and max(1.0, burst / self.share))
        self.signals.connect(self._scraped, item_scraped)
        return project

    async def open_job(self) -> None:
        project = self._project
        assert project is not None
        if self.index != 0 or self.welcome["start_done"]:
            project.start_exhausted = True  # worker 0 feeds them

    def _scraped(self, item: Any, response: Any = None, **_: Any) -> Any:
        request = getattr(response, "request", None)
        key = request.taskid if request is not None else None
        self._items.setdefault(key, []).append(item_dict(item))
        if key is None:  # a start item: no task to wait for
            return self.channel.call("items", self._items.pop(None))
        return None

    def _take_items(self, lease: Lease) -> list[Any] | None:
        return self._items.pop(lease.taskid, None)

    async def report(self) -> None:
        stats = self.stats.to_dict()
        stats["multiproc/worker_cpu_seconds"] = round(time.process_time(), 3)
        await self.channel.call("report", stats)


async def run_worker(crawler: WorkerCrawler, socket_path: str, index: int) -> dict[str, Any]:
    """Connect, crawl what the coordinator hands out, report, say goodbye."""
    channel = await FrameChannel.connect(
        socket_path,
        on_notice=lambda notice: crawler.stop("shutdown") if notice[0] == "stop" else None,
        on_close=lambda: os._exit(3),  # the coordinator is gone: nothing here outlives it
    )
    crawler.channel, crawler.index = channel, index
    crawler.welcome = await channel.call("hello", index)
    reporter = Background("skitter-worker-report")
    reporter.start(periodic(REPORT_EVERY, lambda: _report_quietly(crawler)))
    try:
        [stats] = await run_crawlers([crawler], raise_on_failure=False)
    finally:
        await reporter.stop()
    await crawler.report()
    await channel.call("bye", crawler.failure)
    await channel.close()
    return stats


async def _report_quietly(crawler: WorkerCrawler) -> None:
    with contextlib.suppress(Exception):
        await crawler.report()
