"""``Launcher``: runs as local ``skitter crawl`` processes, at most ``max_proc`` at once.

Each run is its own process (``python -m skitter crawl SPIDER``) so that a spider that
leaks, blocks its loop or crashes harms nobody else, and each has its own files under
the data directory, named as Scrapyd names them:

- ``logs/<project>/<spider>/<job>.log``: its output, masked and size-bounded (``RunLog``);
- ``items/<project>/<spider>/<job>.jl``: its items, as JSON lines (the run's ``-o``);
- ``runs/<project>/<spider>/<job>/``: its job directory (``--job-dir``: a run stopped
  halfway keeps its frontier there) and its final stats (``stats.json``).

Settings overrides reach the process as ``SKITTER_<NAME>`` environment variables, never
on its command line (which any user of the machine can read with ``ps``), and are stored
with secret values masked. Runs wait in a queue while ``max_proc`` run: highest
``priority``, then oldest, first.

How a run ended is read from its exit status: 0 finished, 3 its monitors failed it, any
other failed; cancelled when ``cancel`` stopped it, interrupted when the service itself
stopped it (``stop``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skitter._secrets import MASK, is_secret_name
from skitter._tasks import TaskSet
from skitter.exceptions import ConfigError
from skitter.server._deploy import Deployed, ProjectStore, check_name
from skitter.server._logfile import RunLog
from skitter.server._store import Run, RunStore

__all__ = ["Launcher", "RunFiles"]

log = logging.getLogger("skitter.server")

#: Exit statuses of ``skitter crawl``: see the CLI.
_OUTCOMES = {0: "finished", 3: "monitors_failed"}
#: Seconds a run has to stop after SIGTERM (feeds closed, job dir saved) before SIGKILL.
STOP_GRACE = 30.0


@dataclass(frozen=True, slots=True)
class RunFiles:
    """Where one run's files are."""

    log: Path
    items: Path
    job_dir: Path
    stats: Path

    @classmethod
    def of(cls, data_dir: Path, project: str, spider: str, job: str) -> RunFiles:
        run_dir = data_dir / "runs" / project / spider / job
        return cls(
            log=data_dir / "logs" / project / spider / f"{job}.log",
            items=data_dir / "items" / project / spider / f"{job}.jl",
            job_dir=run_dir / "job",
            stats=run_dir / "stats.json",
        )


@dataclass(slots=True)
class _Active:
    run: Run
    process: asyncio.subprocess.Process
    task: asyncio.Task[None]
    stopping: str | None = None  # the outcome a stop asked for: cancelled, interrupted


class Launcher:
    """Starts, watches and stops runs; records each in ``store``."""

    def __init__(
        self,
        store: RunStore,
        projects: ProjectStore,
        data_dir: Path,
        *,
        max_proc: int = 4,
        log_max_bytes: int = 10 * 2**20,
        log_backups: int = 2,
        now: Callable[[], float],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if max_proc < 1:
            raise ValueError(f"max_proc must be at least 1, not {max_proc}")
        self.store = store
        self.projects = projects
        self.data_dir = data_dir
        self.max_proc = max_proc
        self.log_max_bytes = log_max_bytes
        self.log_backups = log_backups
        self._now = now
        self._environ = dict(os.environ if environ is None else environ)
        self._pending: list[tuple[float, Run, dict[str, str]]] = []
        self._starts = TaskSet()  # each run from its start to its end
        self._active: dict[str, _Active] = {}
        self._slots = 0  # runs started or starting: at most max_proc
        self.on_end: list[Callable[[Run], None]] = []

    def files(self, run: Run) -> RunFiles:
        return RunFiles.of(self.data_dir, run.project, run.spider, run.job)

    # -- queueing -----------------------------------------------------------------------
    def schedule(
        self,
        project: str,
        spider: str,
        *,
        version: str | None = None,
        args: Mapping[str, str] | None = None,
        settings: Mapping[str, str] | None = None,
        job: str | None = None,
        schedule: str | None = None,
        priority: float = 0.0,
    ) -> Run:
        """Queue a run of ``spider``; raises ``LookupError`` for an unknown project,
        version or spider and ``ConfigError`` for a bad job id or a job id in use."""
        deployed = self.projects.get(project, version)
        if spider not in deployed.spiders:
            raise LookupError(f"spider {spider!r} not found in project {project!r}")
        job = check_name("job id", job) if job else uuid.uuid4().hex
        if self.store.exists(job):
            raise ConfigError(f"job id {job!r} is already taken")
        real = dict(settings or {})
        run = Run(
            job=job,
            project=project,
            spider=spider,
            version=deployed.version,
            args=dict(args or {}),
            settings={k: MASK if is_secret_name(k) else v for k, v in real.items()},
            queued_at=self._now(),
            schedule=schedule,
        )
        self.store.add(run)
        self._pending.append((priority, run, real))
        self._pump()
        return run

    def pending(self) -> list[Run]:
        return [run for _, run, _ in self._pending]

    def running(self) -> list[Run]:
        return [active.run for active in self._active.values()]

    def is_active(self, predicate: Callable[[Run], bool]) -> bool:
        """Whether a pending or running run matches (a schedule's "one at a time")."""
        return any(map(predicate, [*self.pending(), *self.running()]))

    async def cancel(self, job: str, sig: int = signal.SIGTERM) -> str | None:
        """Stop a run; its state before (pending, running), or None if it is neither."""
        for index, (_, run, _) in enumerate(self._pending):
            if run.job == job:
                del self._pending[index]
                self._end(run, "cancelled", None)
                return "pending"
        active = self._active.get(job)
        if active is None:
            return None
        active.stopping = "cancelled"
        with contextlib.suppress(ProcessLookupError):
            active.process.send_signal(sig)
        return "running"

    async def stop(self) -> None:
        """Stop every run (SIGTERM, SIGKILL after ``STOP_GRACE``): they are interrupted."""
        while self._pending:
            _, run, _ = self._pending.pop()
            self._end(run, "interrupted", None)
        actives = list(self._active.values())
        for active in actives:
            active.stopping = "interrupted"
            with contextlib.suppress(ProcessLookupError):
                active.process.terminate()
        if actives:
            _done, late = await asyncio.wait([a.task for a in actives], timeout=STOP_GRACE)
            for active in actives:
                if active.task in late:
                    with contextlib.suppress(ProcessLookupError):
                        active.process.kill()
            await asyncio.gather(*(a.task for a in actives), return_exceptions=True)

    # -- running ------------------------------------------------------------------------
    def _pump(self) -> None:
        """Start queued runs while slots are free: highest priority, then oldest, first."""
        while self._pending and self._slots < self.max_proc:
            best = max(range(len(self._pending)), key=lambda i: (self._pending[i][0], -i))
            _, run, settings = self._pending.pop(best)
            self._slots += 1
            self._starts.spawn(self._start(run, settings)).add_done_callback(self._release)

    def _release(self, task: asyncio.Task[None]) -> None:
        self._slots -= 1
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("A run could not be started or followed", exc_info=exc)
        self._pump()

    async def _start(self, run: Run, settings: dict[str, str]) -> None:
        try:
            deployed = self.projects.get(run.project, run.version)
            process = await self._spawn(run, deployed, settings)
        except (LookupError, OSError) as exc:  # the version was deleted while it waited
            self._end(run, "failed", None, reason=f"not started: {exc}")
            return
        files = self.files(run)
        run.state, run.pid, run.started_at = "running", process.pid, self._now()
        self.store.save(run)
        task = asyncio.current_task()
        assert task is not None
        self._active[run.job] = _Active(run, process, task)
        log.info("Run %s started: %s/%s (pid %s)", run.job, run.project, run.spider, run.pid)
        try:
            await self._follow(process, files)
            status = await process.wait()
        finally:
            active = self._active.pop(run.job)
        outcome = active.stopping or _OUTCOMES.get(status, "failed")
        self._end(run, outcome, status, stats=_read_stats(files.stats))

    async def _spawn(
        self, run: Run, deployed: Deployed, settings: dict[str, str]
    ) -> asyncio.subprocess.Process:
        files = self.files(run)
        for path in (files.items.parent, files.job_dir, files.log.parent):
            path.mkdir(parents=True, exist_ok=True)
        return await asyncio.create_subprocess_exec(
            *self._command(run, files),
            cwd=deployed.workdir(files.job_dir.parent),
            env=self._environment(deployed, settings),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C to the service is not the runs' to obey
        )

    def _command(self, run: Run, files: RunFiles) -> list[str]:
        command = [sys.executable, "-m", "skitter", "crawl", run.spider, "--no-progress"]
        command += ["-o", f"{files.items}:jsonlines", "--stats-json", str(files.stats)]
        command += ["--job-dir", str(files.job_dir)]
        for name, value in run.args.items():
            command += ["-a", f"{name}={value}"]
        return command

    def _environment(self, deployed: Deployed, settings: dict[str, str]) -> dict[str, str]:
        env = deployed.environment(self._environ)
        env.update({f"SKITTER_{name}": value for name, value in settings.items()})
        env["PYTHONUNBUFFERED"] = "1"
        return env

    async def _follow(self, process: asyncio.subprocess.Process, files: RunFiles) -> None:
        assert process.stdout is not None
        writer = RunLog(files.log, max_bytes=self.log_max_bytes, backups=self.log_backups)
        try:
            while line := await process.stdout.readline():
                writer.write_line(line.decode("utf-8", "replace"))
                writer.flush()
        finally:
            writer.close()

    def _end(
        self,
        run: Run,
        outcome: str,
        status: int | None,
        *,
        stats: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> None:
        run.state, run.outcome, run.exit_status, run.ended_at = (
            "ended",
            outcome,
            status,
            self._now(),
        )
        run.stats = stats
        run.finish_reason = reason or (stats or {}).get("finish_reason")
        items = (stats or {}).get("item_scraped_count")
        run.items = items if isinstance(items, int) else None
        self.store.save(run)
        log.info("Run %s ended: %s (exit status %s)", run.job, outcome, status)
        for listener in self.on_end:
            listener(run)


def _read_stats(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
