"""``Agent``: what ``skitter agent`` runs on each worker machine of a ``skitter server --redis``.

Every ``POLL`` seconds it reads the runs the service dispatched (``_wire``), and for each
new one, while it has fewer than ``max_runs``, fetches the version's code from Redis
(checked against its SHA-256, kept under ``directory/code/<sha256>/``) and starts
``workers`` ``skitter worker`` processes for the run's job. The workers get:

- the Redis URL in ``$SKITTER_REDIS_URL``, never on their command line;
- ``REDIS_PERSIST`` on, so that a worker that starts late finds the job finished rather
  than starting it again (the service clears the job's keys when the run ends);
- the run's items stream as their only sink (``SINKS``; exactly once, whichever worker
  crawls a page) and no ``FEEDS`` of the project: the items go to the service, as a
  local run's go to its items feed;
- the run's settings overrides and arguments.

Their output is masked and sent, line by line, to the run's log list; the agent's report
(``AgentReport``: state, workers, exit statuses, items, Redis's time) is rewritten at every
poll, which is how the service knows this machine is alive. A run that is cancelled, or
that leaves the runs hash (ended, or its service stopped), gets SIGTERM on every worker
(SIGKILL after ``STOP_GRACE``).

The workers stay in the agent's process group: stopping the machine, or the agent's
group, stops them too, and their leased tasks return to the queue for the other agents.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from redis.asyncio import Redis

from skitter._secrets import mask_text, mask_url
from skitter._tasks import TaskSet
from skitter.exceptions import ConfigError
from skitter.redis import check_access
from skitter.server import _wire
from skitter.server._deploy import Deployed
from skitter.server._wire import AgentReport, RunSpec

__all__ = ["Agent"]

log = logging.getLogger("skitter.server")

POLL = 0.5
STOP_GRACE = 30.0


@dataclass(slots=True)
class _Part:
    """This agent's part in one run."""

    spec: RunSpec
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)
    watchers: TaskSet = field(default_factory=TaskSet)
    lines: list[bytes] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)
    stats: list[Path] = field(default_factory=list)
    stopped: bool = False
    unstarted: int = 0  # workers that could not be started (each has an exit status 2)

    @property
    def done(self) -> bool:
        return len(self.exits) >= len(self.processes) + self.unstarted

    def items(self) -> int:
        total = 0
        for path in self.stats:
            with contextlib.suppress(OSError, orjson.JSONDecodeError, AttributeError):
                count = orjson.loads(path.read_bytes()).get("item_scraped_count")
                total += count if isinstance(count, int) else 0
        return total


class Agent:
    """Takes the runs of one service's Redis and crawls them with local workers."""

    def __init__(
        self,
        redis_url: str,
        directory: Path,
        *,
        name: str,
        workers: int = 1,
        max_runs: int = 4,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, not {workers}")
        if max_runs < 1:
            raise ConfigError(f"--max-runs must be at least 1, not {max_runs}")
        self.redis_url = redis_url
        self.directory = directory
        self.name = name
        self.workers = workers
        self.max_runs = max_runs
        self._environ = dict(os.environ if environ is None else environ)
        self.redis: Redis = Redis.from_url(redis_url)
        self._parts: dict[str, _Part] = {}
        self._finished: set[str] = set()

    def __repr__(self) -> str:
        return f"<Agent {self.name} on {mask_url(self.redis_url)}>"

    async def run(self, stop: asyncio.Event) -> None:
        """Take and follow runs until ``stop`` is set; then stop this agent's workers."""
        self.directory.mkdir(parents=True, exist_ok=True)
        try:  # refused credentials or rights stop the agent here, with one line
            await check_access(self.redis, self.redis_url, lambda: self.redis.hlen(_wire.RUNS))
        except ConfigError:
            await self.redis.aclose()
            raise
        except Exception as exc:  # out of reach: waited for below, as any outage
            log.warning("Agent %s: cannot reach Redis yet: %s", self.name, mask_text(str(exc)))
        log.info("Agent %s taking runs from %s", self.name, mask_url(self.redis_url))
        failing = False
        try:
            while not stop.is_set():
                try:
                    await self.tick()
                    failing = False
                except Exception as exc:  # Redis out of reach: the workers go on
                    if not failing:
                        log.warning(
                            "Agent %s: cannot reach Redis: %s", self.name, mask_text(str(exc))
                        )
                    failing = True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), POLL)
        finally:
            await self._stop_all()
            with contextlib.suppress(Exception):
                await self._report_all()
            await self.redis.aclose()

    async def tick(self) -> None:
        """One look: take new runs, stop dropped ones, report on every one."""
        raw = await self.redis.hgetall(_wire.RUNS)
        specs = {}
        for job, value in raw.items():
            spec = _wire.decode_spec(_bytes(value))
            if spec is not None and spec.job == _bytes(job).decode(errors="replace"):
                specs[spec.job] = spec
        for job, part in self._parts.items():
            spec = specs.get(job)
            if (spec is None or spec.cancel) and not part.stopped:
                self._stop(part)
        for job, spec in specs.items():
            taken = job in self._parts or job in self._finished
            if not taken and not spec.cancel and len(self._parts) < self.max_runs:
                await self._take(spec)
        await self._report_all()

    async def _take(self, spec: RunSpec) -> None:
        try:
            deployed = await self._code(spec)
        except (ConfigError, OSError) as exc:  # said in the run's log; its workers "exit 2"
            why = f"Agent {self.name} cannot run job {spec.job}: {mask_text(str(exc))}"
            log.error("%s", why)
            self._parts[spec.job] = _Part(spec, lines=[why.encode()], exits=[2])
            return
        part = self._parts[spec.job] = _Part(spec)
        run_dir = self.directory / "runs" / spec.job
        for index in range(1, self.workers + 1):
            stats = run_dir / f"worker-{index}.stats.json"
            try:
                stats.parent.mkdir(parents=True, exist_ok=True)
                process = await asyncio.create_subprocess_exec(
                    *_command(spec, stats),
                    cwd=deployed.workdir(run_dir),
                    env=self._environment(spec, deployed),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                )
            except OSError as exc:  # counted as a worker that failed (exit status 2)
                why = f"Agent {self.name} cannot start worker {index}: {exc}"
                log.error("%s", why)
                part.lines.append(why.encode())
                part.unstarted += 1
                part.exits.append(2)
                continue
            part.processes.append(process)
            part.stats.append(stats)
            prefix = f"[{self.name} worker {index}] ".encode()
            part.watchers.spawn(_watch(part, process, prefix))
        log.info("Agent %s: job %s (%s/%s) on %d workers", self.name, spec.job,
                 spec.project, spec.spider, self.workers)  # fmt: skip

    async def _code(self, spec: RunSpec) -> Deployed:
        """The version's code, from this machine's cache or from Redis."""
        base = self.directory / "code" / spec.code
        names = {"directory": "tree", "egg": "project.egg", "wheel": "project.whl"}
        if spec.kind not in names:
            raise ConfigError(f"unknown kind of version {spec.kind!r}")
        target = base / names[spec.kind]
        if not target.exists():
            raw = await self.redis.get(_wire.code_key(spec.code))
            data = b"" if raw is None else _bytes(raw)
            if raw is None or _wire.digest(data) != spec.code:
                raise ConfigError(
                    f"the code of version {spec.version!r} is not in Redis (or not whole)"
                )
            scratch = base.with_name(f"{spec.code}.part")
            scratch.mkdir(parents=True, exist_ok=True)
            if spec.kind == "directory":
                await asyncio.to_thread(_wire.unpack_tree, data, scratch / "tree")
            else:
                (scratch / target.name).write_bytes(data)
            scratch.rename(base)
        module = spec.settings_module
        return Deployed(spec.project, spec.version, spec.kind, target, module, (), 0.0)

    def _environment(self, spec: RunSpec, deployed: Deployed) -> dict[str, str]:
        env = deployed.environment(self._environ)
        env.update({f"SKITTER_{name}": value for name, value in spec.settings.items()})
        env["SKITTER_REDIS_URL"] = self.redis_url
        env["SKITTER_REDIS_PERSIST"] = "true"
        env["SKITTER_FEEDS"] = "{}"
        sink = {self.redis_url: {"stream": _wire.run_key(spec.job, "items")}}
        env["SKITTER_SINKS"] = orjson.dumps(sink).decode()
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def _stop(self, part: _Part) -> None:
        part.stopped = True
        for process in part.processes:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
        log.info("Agent %s: job %s stopped by the service", self.name, part.spec.job)

    async def _stop_all(self) -> None:
        for part in self._parts.values():
            if not part.done:
                self._stop(part)
        watchers = [w for part in self._parts.values() for w in part.watchers]
        if not watchers:
            return
        _, late = await asyncio.wait(watchers, timeout=STOP_GRACE)
        if late:
            for part in self._parts.values():
                for process in part.processes:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
            await asyncio.gather(*late, return_exceptions=True)

    async def _report_all(self) -> None:
        """Each run's report and log lines, one round trip; a run whose workers all
        exited is reported once more, then forgotten."""
        if not self._parts:
            return
        seconds, micros = await self.redis.time()
        now = seconds + micros / 1e6
        reported_done = [job for job, part in self._parts.items() if part.done]
        async with self.redis.pipeline(transaction=False) as pipe:
            for job, part in self._parts.items():
                state = (
                    ("stopped" if part.done else "stopping")
                    if part.stopped
                    else ("done" if part.done else "running")
                )
                report = AgentReport(
                    state, len(part.processes), now, list(part.exits), part.items()
                )
                agents, log_key = _wire.run_key(job, "agents"), _wire.run_key(job, "log")
                pipe.hset(agents, self.name, _wire.encode(report))
                pipe.expire(agents, _wire.RUN_KEYS_TTL)  # a run the service forgot goes too
                if part.lines:
                    lines, part.lines = part.lines, []
                    pipe.rpush(log_key, *lines)
                    pipe.ltrim(log_key, -_wire.LOG_MAX_LINES, -1)
                    pipe.expire(log_key, _wire.RUN_KEYS_TTL)
            await pipe.execute()
        for job in reported_done:  # not one that ended while this was written: next time
            del self._parts[job]
            self._finished.add(job)


def _bytes(value: object) -> bytes:
    """A reply of the bytes client (redis-py's types also allow str)."""
    return value if isinstance(value, bytes) else str(value).encode()


def _command(spec: RunSpec, stats: Path) -> list[str]:
    command = [sys.executable, "-m", "skitter", "worker", spec.spider, "--job", spec.job]
    command += ["--no-progress", "--stats-json", str(stats)]
    for name, value in spec.args.items():
        command += ["-a", f"{name}={value}"]
    return command


async def _watch(part: _Part, process: asyncio.subprocess.Process, prefix: bytes) -> None:
    """Pass a worker's output on (masked), then record its exit status."""
    assert process.stdout is not None
    while line := await process.stdout.readline():
        text = mask_text(line.decode("utf-8", "replace").rstrip("\n"))
        part.lines.append(prefix + text.encode())
    part.exits.append(await process.wait())
