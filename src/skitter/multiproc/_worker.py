"""A worker process of ``skitter crawl --processes N``.

It is a one-process crawl with three things swapped: its frontier is the coordinator's
(``RemoteFrontier``), its items go to the coordinator with the ack of their task (it
has no feed of its own), and the outcomes of start requests are recorded there. Only
worker 0 feeds the start requests. A worker whose coordinator is gone ends at once:
it holds nothing that would outlive it (its unsettled tasks run again).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import time
from collections.abc import Callable
from typing import Any

from skitter._tasks import Background, periodic
from skitter._types import StartOutcomes
from skitter.cluster import FAILED, SUCCEEDED
from skitter.cluster.wiring import heartbeat_of
from skitter.crawler import Crawler, run_crawlers
from skitter.engine import Project
from skitter.frontier import Lease
from skitter.frontier.remote import FrameChannel, RemoteFrontier
from skitter.multiproc._shares import item_dict, shared_rate
from skitter.signals import item_scraped

__all__ = ["WorkerCrawler", "run_worker"]

log = logging.getLogger("skitter.multiproc")

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
    (recorded with each start request queued, so a replacement goes on from there).

    The items ``start()`` yielded since the last record travel with it (``items``), so
    the coordinator writes them and moves the offset past them in one step: a worker
    killed in between yields them again and nothing was written yet."""

    renew_every = 3600.0  # one worker feeds: nothing to renew

    def __init__(self, channel: FrameChannel, items: Callable[[], list[Any]]) -> None:
        self._channel = channel
        self._items = items

    async def wait_turn(self) -> int | None:
        offset: int | None = await self._channel.call("start_turn")
        return offset

    async def progress(self, offset: int) -> bool:
        await self._channel.call("start_progress", offset, False, self._items())
        return True

    async def finished(self, offset: int) -> bool:
        await self._channel.call("start_progress", offset, True, self._items())
        return True


class WorkerCrawler(Crawler):
    """A ``Crawler`` whose tasks and items live in the coordinator (see the module)."""

    channel: FrameChannel
    index: int = 0
    #: The workers of the crawl: each takes this share of its RATE and burst (whichever
    #: holds tasks, the crawl never goes faster than asked).
    share: int = 1
    welcome: dict[str, Any]
    _started: float = 0.0
    _unpicklable: set[str]

    def build(self, mode: str = "crawl") -> Project:
        project = super().build(mode)
        self._items: dict[str | None, list[Any]] = {}
        self._unpicklable = set()
        project.scheduler.frontier = RemoteFrontier(
            self.channel, project.spider, extra=self._take_items
        )
        project.starts = RemoteStartRecord(self.channel)
        project.start_claim = RemoteStartClaim(self.channel, lambda: self._items.pop(None, []))
        scheduler = project.scheduler
        if self.welcome.get("rate") is not None:  # set from the dashboard, shared out
            scheduler.set_rate(*self.welcome["rate"])
        elif self.share > 1:
            scheduler.set_rate(*shared_rate(*scheduler.rate, self.share))
        if self.welcome.get("paused"):
            scheduler.pause()
        self.signals.connect(self._scraped, item_scraped)
        return project

    async def open_job(self) -> None:
        project = self._project
        assert project is not None
        if self.index != 0 or self.welcome["start_done"]:
            project.start_exhausted = True  # worker 0 feeds them

    def _scraped(self, item: Any, response: Any = None, **_: Any) -> Any:
        """Keep the item, as it is now, for the call that settles its task; one of no
        task (``start()``'s) for the next record of the start offset, or, once no
        record follows (the start requests are all queued), send it at once."""
        request = getattr(response, "request", None)
        key = request.taskid if request is not None else None
        self._items.setdefault(key, []).append(self._wire(item))
        project = self._project
        if key is None and (project is None or project.start_exhausted):
            return self.channel.call("items", self._items.pop(None))
        return None

    def _wire(self, item: Any) -> Any:
        """The item pickled, so that the coordinator's feeds get the very item (its
        class for ``item_classes``, its fields, its values' types); one that cannot
        be pickled goes as a plain dict, with a warning (once per class) saying so."""
        try:
            return pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # any reason: say it, send the dict
            name = type(item).__qualname__
            if name not in self._unpicklable:
                self._unpicklable.add(name)
                log.warning(
                    "Items of class %s cannot be pickled (%s: %s): they reach the feeds "
                    "as plain dicts (item_classes filters and exporters see a dict, values "
                    "msgpack cannot hold as text)",
                    name,
                    type(exc).__name__,
                    exc,
                )
            return item_dict(item)

    def _take_items(self, lease: Lease) -> list[Any] | None:
        return self._items.pop(lease.taskid, None)

    def notice(self, message: list[Any]) -> None:
        """What the coordinator says unasked: stop (Ctrl-C), or the dashboard's pause,
        resume or rate (this worker's share); one before the run is applied by ``build``
        (from the welcome)."""
        op = message[0]
        if op == "stop":
            self.stop("shutdown")
            return
        if op == "rate":
            self.welcome["rate"] = message[1:]
        elif op in ("pause", "resume"):
            self.welcome["paused"] = op == "pause"
        if self._project is None or self.control.status == "new":
            return
        if op == "rate":
            self.control.apply_rate(*message[1:])
        elif op == "pause":
            self.control.pause()
        elif op == "resume":
            self.control.resume()

    async def report(self) -> None:
        """This worker's statistics (with its tasks' outcomes and CPU time) and its
        heartbeat, for the coordinator's totals, progress line and dashboard."""
        stats = self.stats.to_dict()
        stats["multiproc/worker_cpu_seconds"] = round(time.process_time(), 3)
        monitor = self.control.monitor
        if monitor is not None:
            stats[SUCCEEDED], stats[FAILED] = monitor.counts()
        beat = heartbeat_of(self.control, started=self._started, interval=REPORT_EVERY)
        await self.channel.call("report", stats, beat.encode())


async def run_worker(crawler: WorkerCrawler, socket_path: str, index: int) -> dict[str, Any]:
    """Connect, crawl what the coordinator hands out, report, say goodbye."""
    channel = await FrameChannel.connect(
        socket_path,
        on_notice=crawler.notice,
        on_close=lambda: os._exit(3),  # the coordinator is gone: nothing here outlives it
    )
    crawler.channel, crawler.index = channel, index
    crawler._started = crawler.clock.time()
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
