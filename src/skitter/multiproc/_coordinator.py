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
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter

from skitter._tasks import Background, periodic
from skitter._types import LISTED_STARTS
from skitter.crawler import Crawler
from skitter.engine import Project
from skitter.frontier.remote import read_frame, write_frame
from skitter.multiproc._service import FrontierService
from skitter.scheduler import slot_by, slot_key
from skitter.scheduler.wiring import netloc_slot_key
from skitter.settings import SchedulerSettings

__all__ = ["Coordinator", "merge_stats"]

log = logging.getLogger("skitter.multiproc")

#: Times a worker may be replaced in one run before the crawl gives up.
MAX_RESPAWNS = 20


def merge_stats(base: dict[str, Any], reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts summed over ``base`` and every report; other values as first seen."""
    merged = dict(base)
    for report in reports:
        for key, value in report.items():
            if key.endswith("_time") or key == "elapsed_time_seconds":
                continue  # the coordinator's own
            mine = merged.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                merged[key] = (mine if isinstance(mine, int | float) else 0) + value
            elif key not in merged:
                merged[key] = value
    return merged


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
        self._writers: dict[int, asyncio.StreamWriter] = {}
        self._finished: set[int] = set()
        self._stopping = False
        self._respawns = 0
        self._generation = 0
        self._starts = _Starts()
        self._procs: dict[int, asyncio.subprocess.Process] = {}
        self.failures: list[str] = []

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

    def stop(self) -> None:
        """Ctrl-C: every worker stops leasing, finishes what it holds and ends."""
        self._stopping = True
        for writer in self._writers.values():
            write_frame(writer, [0, "stop"])

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
            merged["multiproc/requests_pushed"] = self.service.pushed
            merged["multiproc/requests_decoded"] = self.service.decoded
        merged["multiproc/processes"] = self.processes
        merged["multiproc/workers_replaced"] = self._respawns
        return merged

    def worker_pids(self) -> list[int]:
        return [proc.pid for proc in self._procs.values()]

    # -- workers --------------------------------------------------------------------------
    async def _keep(self, index: int) -> None:
        """Run worker ``index`` until it ends cleanly, replacing it if it dies."""
        while True:
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
            self._writers.pop(index, None)
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
        hello = await read_frame(reader)
        if hello is None or hello[1] != "hello":
            writer.close()
            return
        index = int(hello[2])
        self._generation += 1
        generation = self._generation
        self._writers[index] = writer
        project, service = self.project, self.service
        assert project is not None and service is not None
        welcome = {"start_done": project.start_exhausted}
        write_frame(writer, [hello[0], True, welcome])
        if self._stopping:
            write_frame(writer, [0, "stop"])
        while (frame := await read_frame(reader)) is not None:
            call_id, op, args = frame[0], frame[1], frame[2:]
            try:
                result = None
                if op == "report":
                    self._report(index, generation, *args)
                elif op == "bye":
                    self._finished.add(index)
                    if args[0]:
                        self.failures.append(str(args[0]))
                elif op in _ASIDE:
                    result = self._aside(op, args)
                else:
                    result = await service.handle(index, op, args)
            except Exception as exc:  # the worker hears why; the service goes on
                log.exception("Worker %d's %s failed", index, op)
                write_frame(writer, [call_id, False, f"{type(exc).__name__}: {exc}"])
            else:
                write_frame(writer, [call_id, True, result])
        if self._writers.get(index) is writer:
            self._writers.pop(index, None)
            service.worker_lost(index)  # at once, not when the process is reaped
        writer.close()

    def _report(self, index: int, generation: int, stats: dict[str, Any]) -> None:
        self._reports[(index, generation)] = stats
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
            project.start_offset = max(project.start_offset, int(args[0]))
            if args[1]:
                project.start_exhausted = True
                self.service.pending_starts = False
        elif op == "items":
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
        """Items of a settled task, into every feed (before the frontier records it)."""
        project = self.project
        assert project is not None
        spider = project.spider
        feeds = project.pipelines.feeds
        for item in items:
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

        await periodic(min(1.0, lease_seconds / 5), upkeep)


def item_dict(item: Any) -> dict[str, Any]:
    """An item as the plain dict that crosses to the coordinator."""
    return ItemAdapter(item).asdict()
