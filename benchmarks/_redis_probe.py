"""What the Redis benchmark reads from Redis: counters before and after a run, which
commands a crawl sends (MONITOR), by script name, and how long Redis runs each.

``RedisCounters.read`` takes ``INFO`` once; the difference of two snapshots is what a
run cost Redis: commands executed (``total_commands_processed``, which counts the
commands a Lua script runs as well as the scripts themselves), reads of client input
(``total_reads_processed``: one per round trip, since a pipelined batch arrives in one
read), ``EVALSHA`` calls, and Redis's own CPU seconds; on a Redis Cluster the sum of
the masters' snapshots is the cluster's.

``CommandTally`` runs ``MONITOR`` on a thread during one crawl and counts what clients
sent, naming each ``EVALSHA`` by the script whose SHA1 it carries (the frontier's
scripts with their ``_common.lua`` prelude, and the standalone politeness and Bloom
scripts), and what the scripts ran inside. ``ScriptTimer`` sets the slow log to
record every command and sums the time Redis spent executing each (network I/O
excluded). Both run in crawls of their own that are not measured: MONITOR slows Redis
down, and it would inflate the slow log's times (Redis formats a MONITOR line for
every command a script runs, inside the script's time). Both also count by shard of a
sharded job (``--shards``): the shard of a command is the hash tag of its first key
(``JobKeys``: shard 0's tag is ``{project:job}``, shard k's ``{project:job#k.salt}``,
with ``#`` percent-encoded in every name), so they tell how a job's Redis work split
between its shards on one node.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import redis

from skitter.frontier._redis._scripts import SCRIPT_NAMES, script_source
from skitter.redis import script_text

__all__ = ["CommandTally", "RedisCounters", "ScriptTimer", "script_names", "shard_of_command"]

_STOP = "skitter-bench-monitor-stop"
_SLOWLOG_LEN = 1_000_000


@dataclass(frozen=True)
class RedisCounters:
    """One ``INFO`` snapshot, or the difference of two."""

    commands: int
    reads: int
    evalsha: int
    cpu: float

    @classmethod
    def read(cls, client: redis.Redis) -> RedisCounters:
        info: dict[str, Any] = client.info("all")
        evalsha = info.get("cmdstat_evalsha", {}).get("calls", 0)
        return cls(
            int(info["total_commands_processed"]),
            int(info["total_reads_processed"]),
            int(evalsha),
            float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        )

    def __sub__(self, other: RedisCounters) -> RedisCounters:
        return RedisCounters(
            self.commands - other.commands,
            self.reads - other.reads,
            self.evalsha - other.evalsha,
            self.cpu - other.cpu,
        )

    def __add__(self, other: RedisCounters) -> RedisCounters:
        return RedisCounters(
            self.commands + other.commands,
            self.reads + other.reads,
            self.evalsha + other.evalsha,
            self.cpu + other.cpu,
        )

    @classmethod
    def zero(cls) -> RedisCounters:
        return cls(0, 0, 0, 0.0)


def script_names() -> dict[str, str]:
    """SHA1 -> name of every Lua script a worker may send (as redis-py computes it): the
    frontier's, and the standalone ones of the frontier and the cluster."""
    sources = [(name, script_source(name)) for name in SCRIPT_NAMES]
    for package in ("skitter.frontier._redis", "skitter.cluster"):
        for entry in files(package).joinpath("lua").iterdir():
            name = entry.name.removesuffix(".lua")
            if not entry.name.endswith(".lua") or name.startswith("_") or name in SCRIPT_NAMES:
                continue
            # standalone: on its own, after Redis's clock or the Bloom filter's bit positions
            sources += [
                (name, script_text(name, preludes, package))
                for preludes in ((), ("_clock",), ("_bloom",))
            ]
    return {hashlib.sha1(src.encode()).hexdigest(): name for name, src in sources}


class CommandTally:
    """``MONITOR`` on a thread: ``sent`` (what clients sent: ``evalsha <script>`` or the
    command name) and ``inside`` (what the scripts ran), until ``stop()``."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._names = script_names()
        self.sent: Counter[str] = Counter()
        self.inside: Counter[str] = Counter()
        #: What clients sent to each shard, and what the scripts ran on it.
        self.sent_by_shard: Counter[int] = Counter()
        self.inside_by_shard: Counter[int] = Counter()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="redis-monitor", daemon=True)
        self._error: BaseException | None = None

    def start(self) -> CommandTally:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("MONITOR did not start within 10 s")
        return self

    def stop(self) -> None:
        """Send the stop marker (MONITOR sees it after everything sent before) and wait."""
        with redis.Redis.from_url(self._url) as client:
            client.echo(_STOP)
        self._thread.join(30)
        if self._error is not None:
            raise RuntimeError(f"MONITOR failed: {self._error}") from self._error

    def _run(self) -> None:
        try:
            with redis.Redis.from_url(self._url) as client, client.monitor() as monitor:
                self._ready.set()
                while True:
                    # The raw line, not Monitor.next_command(): its regexes over whole
                    # push payloads would make the tally the slowest part of the crawl.
                    line = monitor.connection.read_response()
                    if isinstance(line, bytes):
                        line = line.decode("utf-8", "replace")
                    if _STOP in line:
                        return
                    self._count(line)
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    def _count(self, line: str) -> None:
        # '1700000000.123456 [0 127.0.0.1:40000] "evalsha" "<sha>" "8" ...'
        client, _, rest = line.partition("] ")
        words = [word.strip('"') for word in rest.split(" ", 2)[:2]]
        command = _name(words, self._names)
        shard = shard_of_command(rest)
        if client.endswith(" lua"):
            self.inside[command] += 1
            if shard is not None:
                self.inside_by_shard[shard] += 1
        else:
            self.sent[command] += 1
            if shard is not None:
                self.sent_by_shard[shard] += 1


class ScriptTimer:
    """The slow log set to record every command, from ``start()`` to ``stop()``:
    ``micros``, the microseconds Redis spent executing each command (``evalsha
    <script>`` or the command name), network I/O excluded."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._names = script_names()
        self.micros: Counter[str] = Counter()
        self.micros_by_shard: Counter[int] = Counter()
        self._saved: dict[str, str] = {}

    def start(self) -> ScriptTimer:
        with redis.Redis.from_url(self._url) as client:
            for name in ("slowlog-log-slower-than", "slowlog-max-len"):
                self._saved |= client.config_get(name)
            client.config_set("slowlog-log-slower-than", 0)
            client.config_set("slowlog-max-len", _SLOWLOG_LEN)
            client.slowlog_reset()
        return self

    def stop(self) -> None:
        with redis.Redis.from_url(self._url) as client:
            entries = client.slowlog_get(_SLOWLOG_LEN)
            for name, value in self._saved.items():
                client.config_set(name, value)
        for entry in entries:
            line = entry["command"].decode("utf-8", "replace")
            self.micros[_name(line.split(" ", 2)[:2], self._names)] += entry["duration"]
            shard = shard_of_command(line)
            if shard is not None:
                self.micros_by_shard[shard] += entry["duration"]


def shard_of_command(line: str) -> int | None:
    """The shard of a command (its words as MONITOR or the slow log shows them): that of
    the first hash tag in it, which is its first key's; None without one (PING, INFO)."""
    start = line.find("{")
    end = line.find("}", start + 1)
    if start < 0 or end < 0:
        return None
    _, marked, rest = line[start + 1 : end].rpartition("#")
    if not marked:
        return 0
    index = rest.partition(".")[0]
    return int(index) if index.isdigit() else None


def _name(words: list[str], scripts: dict[str, str]) -> str:
    """``evalsha <script name>`` for a script call, else the command's name."""
    command = words[0].lower()
    if command == "evalsha" and len(words) > 1:
        return f"evalsha {scripts.get(words[1], 'unknown script')}"
    return command
