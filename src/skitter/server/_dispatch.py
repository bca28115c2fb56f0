"""``Dispatcher``: the service's runs as distributed jobs, crawled by agents elsewhere.

With ``skitter server --redis URL`` a run is not a local process: it is published in
Redis (``_wire``) with its version's code, and every ``skitter agent`` on that Redis
starts workers for it (``skitter worker``: one shared frontier, dupe filter and
politeness). The service follows it from here: it moves the workers' items and log
lines into the run's files as they come, keeps the job's cluster-wide stats on the run,
and ends the run once an agent says its workers are done and no other agent is still
at it. An agent that stops reporting for ``agent_timeout`` seconds (its machine died)
is no longer waited for; its leased tasks go back to the queue when their leases
expire, so another agent's workers crawl them. A run no agent reports on stays
pending, or running, with its tasks kept in Redis, until one does.

Queueing, priorities and ``max_proc`` (here: runs dispatched at once) are the
``Launcher``'s; this class replaces how a run is started, followed and stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from skitter._secrets import is_secret_name, mask_text, mask_url
from skitter.cluster import RedisStats
from skitter.engine import Stats
from skitter.exceptions import ConfigError
from skitter.redis import JobKeys
from skitter.server import _wire
from skitter.server._deploy import Deployed, ProjectStore
from skitter.server._logfile import RunLog
from skitter.server._runner import Launcher
from skitter.server._store import Run, RunStore
from skitter.server._wire import AgentReport, RunSpec

__all__ = ["Dispatcher"]

log = logging.getLogger("skitter.server")

#: Seconds between two looks at a dispatched run.
POLL = 0.5
#: An agent's states while its workers are at a run.
_AT_IT = ("running", "stopping")


@dataclass(slots=True)
class _Remote:
    run: Run
    stopping: str | None = None  # cancelled, interrupted
    items_from: bytes = b"0-0"  # the last stream entry moved to the items file
    stale_warned: set[str] = field(default_factory=set)


class Dispatcher(Launcher):
    """A ``Launcher`` whose runs are crawled by the agents of ``redis_url``."""

    def __init__(
        self,
        store: RunStore,
        projects: ProjectStore,
        data_dir: Path,
        *,
        redis_url: str,
        agent_timeout: float = 30.0,
        now: Callable[[], float],
        **options: Any,
    ) -> None:
        super().__init__(store, projects, data_dir, now=now, **options)
        if not agent_timeout > 0:
            raise ConfigError(f"--agent-timeout must be more than 0, not {agent_timeout}")
        self.redis_url = redis_url
        self.agent_timeout = agent_timeout
        self.redis: Redis = Redis.from_url(redis_url)
        self._remote: dict[str, _Remote] = {}
        self._all_ended = asyncio.Event()  # set whenever no run is followed
        self._all_ended.set()

    def __repr__(self) -> str:
        return f"<Dispatcher on {mask_url(self.redis_url)}>"

    def schedule(self, project: str, spider: str, **kwargs: Any) -> Run:
        """As ``Launcher.schedule``; a secret setting is refused (it would sit in Redis)."""
        secret = sorted(name for name in kwargs.get("settings") or {} if is_secret_name(name))
        if secret:
            raise ConfigError(
                f"secret settings ({', '.join(secret)}) are not sent through Redis to the "
                "agents: keep them in the project's settings"
            )
        return super().schedule(project, spider, **kwargs)

    def pending(self) -> list[Run]:
        waiting = [r.run for r in self._remote.values() if r.run.state == "pending"]
        return [*super().pending(), *waiting]

    def running(self) -> list[Run]:
        return [r.run for r in self._remote.values() if r.run.state == "running"]

    async def cancel(self, job: str, sig: int = signal.SIGTERM) -> str | None:
        remote = self._remote.get(job)
        if remote is None:
            return await super().cancel(job, sig)
        before = remote.run.state
        remote.stopping = "cancelled"
        await self._mark_cancelled(remote.run)
        return before

    async def stop(self) -> None:
        """Stop following every run: each is told to stop on the agents, and recorded
        interrupted (the service that would take its items is going away)."""
        await super().stop()
        for remote in list(self._remote.values()):
            remote.stopping = "interrupted"
            with contextlib.suppress(Exception):
                await self.redis.hdel(_wire.RUNS, remote.run.job)
        if self._remote:
            await self._all_ended.wait()
        await self.redis.aclose()

    async def forget(self, runs: list[Run]) -> None:
        """Take the runs a previous service left (now interrupted) off the agents, and
        their jobs' keys out of Redis (nobody will take their items any more)."""
        for run in runs:
            await self._clear(run)

    # -- one run ------------------------------------------------------------------------
    async def _start(self, run: Run, settings: dict[str, str]) -> None:
        try:
            deployed = self.projects.get(run.project, run.version)
            await self._publish(run, deployed, settings)
        except (LookupError, OSError, ConfigError) as exc:
            self._end(run, "failed", None, reason=f"not dispatched: {exc}")
            return
        except Exception as exc:  # Redis refused or is out of reach
            self._end(run, "failed", None, reason=f"not dispatched: {mask_text(str(exc))}")
            return
        remote = self._remote[run.job] = _Remote(run)
        self._all_ended.clear()
        run.cluster_job = f"{run.spider}:{run.job}"
        self.store.save(run)
        log.info("Run %s dispatched as job %s on %s", run.job, run.cluster_job, self)
        files = self.files(run)
        writer = RunLog(files.log, max_bytes=self.log_max_bytes, backups=self.log_backups)
        try:
            outcome, status, stats = await self._follow_remote(remote, writer)
        finally:
            writer.close()
            del self._remote[run.job]
        try:
            self._end(run, outcome, status, stats=stats)
            with contextlib.suppress(Exception):
                await self._clear(run)
        finally:
            if not self._remote:
                self._all_ended.set()

    async def _publish(self, run: Run, deployed: Deployed, settings: Mapping[str, str]) -> RunSpec:
        if deployed.kind == "directory":
            data = await asyncio.to_thread(_wire.zip_tree, deployed.path)
        else:
            data = await asyncio.to_thread(deployed.path.read_bytes)
            if len(data) > _wire.CODE_MAX_BYTES:
                raise ConfigError(f"the {deployed.kind} is larger than {_wire.CODE_MAX_BYTES}")
        digest = _wire.digest(data)
        spec = RunSpec(
            job=run.job, project=run.project, version=run.version, spider=run.spider,
            kind=deployed.kind, code=digest, size=len(data),
            settings_module=deployed.settings_module, args=dict(run.args),
            settings=dict(settings),
        )  # fmt: skip
        key = _wire.code_key(digest)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, data, nx=True)
            pipe.expire(key, _wire.CODE_TTL)
            pipe.hset(_wire.RUNS, run.job, _wire.encode(spec))
            await pipe.execute()
        files = self.files(run)
        for path in (files.items.parent, files.job_dir.parent, files.log.parent):
            path.mkdir(parents=True, exist_ok=True)
        return spec

    async def _follow_remote(
        self, remote: _Remote, writer: RunLog
    ) -> tuple[str, int | None, dict[str, Any] | None]:
        """Poll until the run ends: (outcome, exit status, the job's stats). Redis out
        of reach is waited for (the job's state is there): it costs no run."""
        failing = False
        while remote.stopping != "interrupted":
            try:
                ended = await self._look(remote, writer)
            except Exception as exc:
                if not failing:
                    log.warning(
                        "Run %s: cannot reach Redis: %s", remote.run.job, mask_text(str(exc))
                    )
                failing = True
            else:
                failing = False
                if ended is not None:
                    return ended
            await asyncio.sleep(POLL)
        return "interrupted", None, remote.run.stats

    async def _look(
        self, remote: _Remote, writer: RunLog
    ) -> tuple[str, int | None, dict[str, Any] | None] | None:
        """One look at the run: how it ended, or None while it goes on."""
        run = remote.run
        keys = JobKeys.for_job(run.spider, run.job)
        await self._move_output(remote, writer)
        reports, now = await self._reports(run.job)
        stats = await _totals(self.redis, keys)
        stale = {
            a
            for a, r in reports.items()
            if r.state in _AT_IT and now - r.seen >= self.agent_timeout
        }
        self._warn_stale(remote, stale)
        if reports and run.state == "pending":
            run.state, run.started_at = "running", self._now()
        run.stats = _with_agents(stats, reports)
        self.store.save(run)
        ended = ending(reports, now, self.agent_timeout, cancelling=remote.stopping == "cancelled")
        if ended is None:
            return None
        await self.redis.hdel(_wire.RUNS, run.job)  # no agent takes it again
        await self._move_output(remote, writer)  # what came with the last reports
        return (*ended, _with_agents(await _totals(self.redis, keys), reports))

    async def _reports(self, job: str) -> tuple[dict[str, AgentReport], float]:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(_wire.run_key(job, "agents"))
            pipe.time()
            raw, (seconds, micros) = await pipe.execute()
        reports = {}
        for name, value in raw.items():
            report = _wire.decode_report(value)
            if report is not None:
                reports[name.decode(errors="replace")] = report
        return reports, seconds + micros / 1e6

    def _warn_stale(self, remote: _Remote, stale: set[str]) -> None:
        for agent in stale - remote.stale_warned:
            log.warning(
                "Run %s: agent %s has not reported for %g s: its tasks go to the other "
                "agents once their leases expire",
                remote.run.job,
                agent,
                self.agent_timeout,
            )
        remote.stale_warned |= stale

    async def _move_output(self, remote: _Remote, writer: RunLog) -> None:
        """The workers' log lines and items, from Redis into the run's files."""
        job = remote.run.job
        log_key = _wire.run_key(job, "log")
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(log_key, 0, -1)
            pipe.delete(log_key)
            lines, _ = await pipe.execute()
        for line in lines:
            writer.write_line(line.decode("utf-8", "replace"))
        writer.flush()
        items_key = _wire.run_key(job, "items")
        while entries := await self.redis.xrange(items_key, b"(" + remote.items_from, count=500):
            ids = [_bytes(entry_id) for entry_id, _ in entries]
            with self.files(remote.run).items.open("ab") as out:
                for _, fields in entries:
                    out.write(_bytes((fields or {}).get(b"item", b"{}")) + b"\n")
            remote.items_from = ids[-1]
            await self.redis.xdel(items_key, *ids)

    async def _mark_cancelled(self, run: Run) -> None:
        raw = await self.redis.hget(_wire.RUNS, run.job)
        spec = _wire.decode_spec(_bytes(raw)) if raw else None
        if spec is not None:
            cancelled = _wire.RunSpec(**{**_fields(spec), "cancel": True})
            await self.redis.hset(_wire.RUNS, run.job, _wire.encode(cancelled))

    async def _clear(self, run: Run) -> None:
        """The run's records and its job's keys: the service keeps what it needs."""
        await self.redis.hdel(_wire.RUNS, run.job)
        names = [_wire.run_key(run.job, what) for what in ("agents", "log", "items")]
        await self.redis.delete(*names, f"{names[2]}:ids")
        tag = JobKeys.for_job(run.spider, run.job).tag
        for pattern in (f"{_glob(tag)}:*", f"{_glob(tag[:-1])}#*"):
            async for key in self.redis.scan_iter(match=pattern, count=500):
                await self.redis.unlink(key)


def _bytes(value: object) -> bytes:
    """A reply of the bytes client (redis-py's types also allow str)."""
    return value if isinstance(value, bytes) else str(value).encode()


def _fields(spec: RunSpec) -> dict[str, Any]:
    return {name: getattr(spec, name) for name in spec.__struct_fields__}


def _glob(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


async def _totals(redis: Redis, keys: JobKeys) -> dict[str, Any]:
    return await RedisStats(redis, keys, Stats()).totals()


def _with_agents(stats: dict[str, Any], reports: Mapping[str, AgentReport]) -> dict[str, Any]:
    """The job's stats and, per agent, its workers and the items they scraped."""
    out = dict(stats)
    for agent, report in reports.items():
        out[f"agent/{agent}/workers"] = report.workers
        out[f"agent/{agent}/state"] = report.state
        out[f"agent/{agent}/item_scraped_count"] = report.items
    return out


def ending(
    reports: Mapping[str, AgentReport], now: float, agent_timeout: float, *, cancelling: bool
) -> tuple[str, int | None] | None:
    """How a run ended (outcome, exit status), or None while an agent is at it: one
    whose workers run or are stopping and that reported within ``agent_timeout``. A run
    that no agent took yet goes on (unless cancelled); one whose agents all went silent
    goes on too, its tasks kept in Redis for the next agent."""
    if any(r.state in _AT_IT and now - r.seen < agent_timeout for r in reports.values()):
        return None
    if cancelling:
        return "cancelled", None
    if any(r.state in ("done", "stopped") for r in reports.values()):
        return _outcome(reports)
    return None


def _outcome(reports: Mapping[str, AgentReport]) -> tuple[str, int]:
    """How the run ended, from its workers' exit statuses (an agent that died said none)."""
    exits = [status for r in reports.values() for status in r.exits]
    bad = [status for status in exits if status != 0]
    if any(r.state == "stopped" for r in reports.values()):
        return "cancelled", next(iter(bad), 0)
    if not bad:
        return "finished", 0
    return ("monitors_failed" if set(bad) == {3} else "failed"), bad[0]
