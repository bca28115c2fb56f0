"""The coordinator of ``skitter crawl --processes N``: the parent process.

It builds the crawl as a one-process crawl would (settings, spider, job directory,
frontier, feeds) but runs no engine: it serves the frontier to N worker processes
(``FrontierService``), writes the items they settle into the one feed the user asked
for, sums their statistics, and replaces a worker that dies.

- **Feeds and the job.** The feeds are this process's: items arrive with the ack of
  their task and are written before the frontier records it, and the job directory
  checkpoints the feed's size with every write of the frontier, as in one process. So
  every item is in the feed exactly once, also after a kill -9 of a worker (its
  unsettled tasks bring no items, and run again elsewhere) or of the coordinator (the
  resume cuts the feed back to the checkpoint, whose tasks are exactly those settled).
- **Start requests** are fed by worker 0 (its offset comes from, and goes back to, the
  job's checkpoint); their outcomes are recorded here, so the judgement at the end sees
  every worker's.
- **Statistics**: each worker reports its own about twice a second; the crawl's are
  the job's restored figures plus the sum of every worker's last report (a replaced
  worker's included).
- **Stopping**: ``stop`` tells every worker to stop leasing and drain (Ctrl-C); a worker
  that ends cleanly says goodbye first, so its exit is not taken for a death.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skitter._clock import Clock
from skitter._tasks import Background, periodic
from skitter._types import LISTED_STARTS
from skitter.cluster import Heartbeat
from skitter.crawler import Crawler
from skitter.engine import Project, TaskCounts
from skitter.frontier import FrontierCounts, TaskInfo, TaskState
from skitter.frontier.remote import Outbox, answer_calls, read_frame
from skitter.multiproc._service import FrontierService
from skitter.multiproc._shares import merge_stats, shared_rate
from skitter.scheduler import RateLimits, slot_by, slot_key
from skitter.scheduler.wiring import DONE, netloc_slot_key
from skitter.settings import SchedulerSettings

__all__ = ["Coordinator"]

log = logging.getLogger("skitter.multiproc")

#: Times a worker may be replaced in one run before the crawl gives up.
MAX_RESPAWNS = 20


#: The ops the coordinator serves itself (start requests, start items).
_ASIDE = frozenset(
    {"start_turn", "start_progress", "start_accepted", "start_refused", "start_outcomes", "items"}
)


@dataclass
class _Starts:
    accepted: bool = False
    refused: int = 0
    listed: list[tuple[str, str]] = field(default_factory=list)


class Coordinator:
    """One ``--processes`` crawl; ``run`` returns once every worker has ended."""

    def __init__(
        self, crawler: Crawler, processes: int, worker_argv: Sequence[str], socket_dir: Path
    ) -> None:
        self.crawler = crawler
        self.processes = processes
        self.socket_path = str(socket_dir / f"skitter-{os.getpid()}.sock")
        self._argv = list(worker_argv)
        self.project: Project | None = None
        self.service: FrontierService | None = None
        self.items = 0
        self._reports: dict[tuple[int, int], dict[str, Any]] = {}
        self._base: dict[str, Any] = {}
        self._outboxes: dict[int, Outbox] = {}
        #: Frames the workers' connections carried back (the ended ones).
        self.frames = 0
        self._finished: set[int] = set()
        self._stopping = False
        self._respawns = 0
        self._generation = 0
        self._starts = _Starts()
        self._procs: dict[int, asyncio.subprocess.Process] = {}
        self.failures: list[str] = []
        #: What each live worker last said of itself (the dashboard's view of it).
        self._beats: dict[int, Heartbeat] = {}
        #: The frontier's counts as the workers see them, read about once a second.
        self._counts = FrontierCounts(0, 0, 0)
        self._paused = False
        #: The rate set from the dashboard (None: each worker's share of the settings').
        self._rate: tuple[float | None, float | None] | None = None
        self._closed = False
        #: When each worker was spawned (monotonic), until its first lease; the longest
        #: spawn-to-first-lease seen: what starting a worker costs the crawl.
        self._spawned: dict[int, float] = {}
        self.worker_start = 0.0

    # -- the crawl ------------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        crawler = self.crawler
        project = self.project = crawler.build()
        await crawler.open_job()
        project.stats.set("start_time", crawler.clock.time())
        self._base = project.stats.to_dict()
        self.service = FrontierService(
            project.scheduler.frontier,
            project.spider,
            self.processes,
            self._store,
            netloc_slot_key if slot_by(crawler.settings) == "netloc" else slot_key,
        )
        self.service.pending_starts = not project.start_exhausted
        pipelines = project.pipelines
        pipelines.pipelines = list(pipelines.feeds)  # the user's pipelines run in the workers
        await pipelines.open_spider(project.spider)
        server = await asyncio.start_unix_server(self._serve, self.socket_path, limit=2**26)
        started = crawler.clock.monotonic()
        try:
            async with server:
                upkeep = Background("skitter-multiproc-upkeep")
                upkeep.start(self._upkeep())
                try:
                    await asyncio.gather(*(self._keep(i) for i in range(self.processes)))
                finally:
                    await upkeep.stop()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)
            await self._close(project, started)
        return project.stats.to_dict()

    async def _close(self, project: Project, started: float) -> None:
        stats = project.stats
        for key, value in self.stats().items():
            stats.set(key, value)
        clock = self.crawler.clock
        stats.set("finish_time", clock.time())
        # Its whole life, start-up included: what one page costs the coordinator.
        stats.set("multiproc/coordinator_cpu_seconds", round(time.process_time(), 3))
        stats.set("elapsed_time_seconds", round(clock.monotonic() - started, 3))
        reason = "shutdown" if self._stopping else "finished"
        for why in self.failures:
            project.fail(why, stop=False)
        try:
            await project.pipelines.close_spider(project.spider)
        finally:
            await project.scheduler.frontier.close()
        stats.set("finish_reason", "failed" if project.failure is not None else reason)
        self._closed = True

    def stop(self) -> None:
        """Ctrl-C: every worker stops leasing, finishes what it holds and ends."""
        self._stopping = True
        self._tell(["stop"])

    def kill(self) -> None:
        """A second Ctrl-C: end every worker now (the job resumes what they held)."""
        self._stopping = True
        for proc in self._procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)

    def stats(self) -> dict[str, Any]:
        merged = merge_stats(self._base, list(self._reports.values()))
        if self.service is not None:
            merged["multiproc/coordinator_calls"] = self.service.calls
            frames = self.frames + sum(outbox.frames for outbox in self._outboxes.values())
            merged["multiproc/coordinator_frames"] = frames
            merged["multiproc/requests_pushed"] = self.service.pushed
            merged["multiproc/requests_decoded"] = self.service.decoded
        merged["multiproc/processes"] = self.processes
        merged["multiproc/worker_start_seconds"] = round(self.worker_start, 3)
        merged["multiproc/workers_replaced"] = self._respawns
        return merged

    def worker_pids(self) -> list[int]:
        return [proc.pid for proc in self._procs.values()]

    # -- workers --------------------------------------------------------------------------
    async def _keep(self, index: int) -> None:
        """Run worker ``index`` until it ends cleanly, replacing it if it dies."""
        while True:
            self._spawned[index] = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "skitter",
                *self._argv,
                "--worker-socket",
                self.socket_path,
                "--worker-index",
                str(index),
                "--worker-count",
                str(self.processes),
                start_new_session=True,  # Ctrl-C reaches the coordinator, which tells them
            )
            self._procs[index] = proc
            code = await proc.wait()
            if index in self._finished:
                return
            assert self.service is not None
            back = self.service.worker_lost(index)
            self._outboxes.pop(index, None)
            if self._stopping:
                return
            self._respawns += 1
            log.warning(
                "Worker %d (pid %d) ended without finishing (exit %s): %d tasks it held "
                "are queued for its replacement",
                index,
                proc.pid,
                code,
                back,
            )
            if self._respawns > MAX_RESPAWNS:
                self.failures.append(f"worker processes died {self._respawns} times")
                self.stop()
                return

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await read_frame(reader)
        if not first or first[0][1] != "hello":
            writer.close()
            return
        hello = first[0]
        index = int(hello[2])
        self._generation += 1
        generation = self._generation
        outbox = self._outboxes[index] = Outbox(writer)
        project, service = self.project, self.service
        assert project is not None and service is not None
        rate = None if self._rate is None else shared_rate(*self._rate, self.processes)
        welcome = {"start_done": project.start_exhausted, "paused": self._paused, "rate": rate}
        outbox.send([hello[0], True, welcome])
        if self._stopping:
            outbox.send([0, "stop"])

        async def handle(op: str, args: list[Any]) -> Any:
            try:
                return await self._handle(index, generation, op, args)
            except Exception:
                log.exception("Worker %d's %s failed", index, op)
                raise

        await answer_calls(reader, outbox, handle, first[1:])
        self.frames += outbox.frames
        if self._outboxes.get(index) is outbox:
            self._outboxes.pop(index, None)
            self._beats.pop(index, None)
            service.worker_lost(index)  # at once, not when the process is reaped
        writer.close()

    async def _handle(self, index: int, generation: int, op: str, args: list[Any]) -> Any:
        """One call of worker ``index`` (its ``generation``-th connection)."""
        assert self.service is not None
        if op == "report":
            self._report(index, generation, *args)
        elif op == "bye":
            self._finished.add(index)
            if args[0]:
                self.failures.append(str(args[0]))
        elif op in _ASIDE:
            return self._aside(op, args)
        else:
            if op == "lease" and (spawned := self._spawned.pop(index, None)) is not None:
                self.worker_start = max(self.worker_start, time.monotonic() - spawned)
            return await self.service.handle(index, op, args)
        return None

    def _report(self, index: int, generation: int, stats: dict[str, Any], beat: bytes) -> None:
        self._reports[(index, generation)] = stats
        if (heartbeat := Heartbeat.decode(beat)) is not None:
            self._beats[index] = heartbeat
        project = self.project
        assert project is not None
        for key, value in self.stats().items():  # what the job's checkpoint records
            project.stats.set(key, value)

    def _aside(self, op: str, args: list[Any]) -> Any:
        starts, project = self._starts, self.project
        assert project is not None and self.service is not None
        if op == "start_turn":
            return None if project.start_exhausted else project.start_offset
        if op == "start_progress":  # what the job's checkpoint records from now on
            self._store(args[2])  # start() items before the offset past them
            project.start_offset = max(project.start_offset, int(args[0]))
            if args[1]:
                project.start_exhausted = True
                self.service.pending_starts = False
        elif op == "items":  # of no task, once no start record follows: written now
            self._store(args[0])
        elif op == "start_accepted":
            starts.accepted = True
        elif op == "start_refused":
            starts.refused += 1
            if len(starts.listed) < LISTED_STARTS:
                starts.listed.append((args[0], args[1]))
        else:
            return [starts.accepted, starts.refused, starts.listed]
        return None

    def _store(self, items: list[Any]) -> None:
        """Items of a settled task, into every feed (before the frontier records it).

        Each comes pickled by its worker (a child of this process, over a socket in a
        private directory: the same code on both ends), so the feeds get the item the
        spider yielded; one that could not be pickled comes as a dict (its worker
        warned)."""
        project = self.project
        assert project is not None
        spider = project.spider
        feeds = project.pipelines.feeds
        for wire in items:
            item = pickle.loads(wire) if isinstance(wire, bytes) else wire
            for feed in feeds:
                feed.process_item(item, spider)
        self.items += len(items)

    async def _upkeep(self) -> None:
        """Keep stashed leases alive and reclaim the expired ones, as an engine would."""
        assert self.service is not None
        lease_seconds = self.crawler.settings.view(SchedulerSettings).processing_timeout
        service, clock = self.service, self.crawler.clock

        async def upkeep() -> None:
            now = clock.time()
            await service.renew_stashed(now, lease_seconds)
            await service.frontier.reclaim_expired(now)
            await self.queue_counts()

        await periodic(min(1.0, lease_seconds / 5), upkeep)

    # -- what the dashboard shows and changes (``dashboard.ProcessesProject``) ------------
    @property
    def name(self) -> str:
        return self.crawler.control.name

    @property
    def clock(self) -> Clock:
        return self.crawler.clock

    @property
    def limits(self) -> RateLimits:
        return self.crawler.control.limits

    @property
    def status(self) -> str:
        """new, running, paused, checking (as the workers are), then done or failed."""
        project = self.project
        if project is None:
            return "new"
        if self._closed:
            return "failed" if project.failure is not None else "done"
        if self._paused:
            return "paused"
        statuses = {beat.status for beat in self._beats.values()}
        return next((s for s in ("running", "checking", "paused") if s in statuses), "running")

    @property
    def rate(self) -> tuple[float | None, float | None]:
        """The crawl's rate and burst: the settings', or as set from the dashboard."""
        if self._rate is not None:
            return self._rate
        project = self.project
        return project.scheduler.rate if project is not None else (None, None)

    def beats(self) -> list[Heartbeat]:
        return [self._beats[index] for index in sorted(self._beats)]

    def task_counts(self, counts: FrontierCounts | None = None) -> TaskCounts:
        """The crawl's tasks by where they are: waiting and delayed in the frontier
        (``counts``, else as last read), leased and in flight in the live workers, done
        by all of them."""
        counts = counts if counts is not None else self._counts
        beats = self._beats.values()
        return TaskCounts(
            waiting=counts.ready,
            delayed=counts.delayed,
            leased=sum(beat.leased for beat in beats),
            in_flight=sum(beat.in_flight for beat in beats),
            done=int(self.stats().get(DONE, 0) or 0),
        )

    async def queue_counts(self) -> FrontierCounts:
        """The frontier's counts as the workers see them (stashed leases are ready)."""
        if self.service is not None:
            now = self.crawler.clock.time()
            self._counts = FrontierCounts(*await self.service.counts(0, now))
        return self._counts

    async def failed_tasks(self, limit: int = 100) -> list[TaskInfo]:
        if self.service is None:
            return []
        return await self.service.frontier.tasks(TaskState.FAILED, limit)

    async def retry_failed(self, *, domain: str | None = None, reason: str | None = None) -> int:
        """Queue FAILED tasks again: the workers lease them as any other."""
        if self.service is None:
            return 0
        now = self.crawler.clock.time()
        return await self.service.frontier.retry_failed(now, domain=domain, reason=reason)

    async def requeue_bad(self, *, domain: str | None = None, reason: str | None = None) -> int:
        if self.service is None:
            return 0
        now = self.crawler.clock.time()
        return await self.service.frontier.requeue_bad(now, domain=domain, reason=reason)

    def set_rate(self, rate: float | None, burst: float | None = None) -> None:
        """Every worker takes its share of ``rate`` and ``burst`` (None: unlimited, resp.
        10 x rate); ConfigError above MAX_RATE/MAX_BURST."""
        limits = self.limits
        limits.check(rate, burst)
        burst = None if rate is None else limits.burst_for(rate, burst)
        self._rate = (rate, burst)
        self._tell(["rate", *shared_rate(rate, burst, self.processes)])

    def pause(self) -> None:
        self._paused = True
        self._tell(["pause"])

    def resume(self) -> None:
        self._paused = False
        self._tell(["resume"])

    def _tell(self, notice: list[Any]) -> None:
        for outbox in self._outboxes.values():
            outbox.send([0, *notice])
