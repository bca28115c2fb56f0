"""Distributed crawl benchmark: 1, 2 and 4 ``skitter worker`` processes on a local Redis
against the in-memory crawl of the same spider (issue 6).

Generates (or reuses) the synthetic site of ``crawl_bench.py``, serves it with nginx,
starts a private ``redis-server`` on a free port (no AOF), and crawls the site
``--runs`` times, interleaved: in memory (``skitter crawl``), then with each number of
workers (``skitter worker``, a fresh job per run). Every run must crawl every page
exactly once and write every item exactly once across its processes, or the benchmark
fails. Prints the median pages/s, CPU per 1,000 pages, Redis CPU and round trips per
page, the 1-worker/in-memory ratio against the 0.7x target, and the 2- and 4-worker
ratios to 1 worker::

    PYTHONPATH=src .venv/bin/python benchmarks/redis_bench.py                  # 20,000 pages
    PYTHONPATH=src .venv/bin/python benchmarks/redis_bench.py --pages 2000 --runs 1
    PYTHONPATH=src .venv/bin/python benchmarks/redis_bench.py --pages 2000 --runs 1 --breakdown

``--breakdown`` adds two unmeasured 1-worker crawls, under ``MONITOR`` and with the slow
log recording every command, and prints which commands and scripts each page costs and
how long Redis takes over each: where the round trips and Redis's time go.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
from _nginx import NginxMissing, NginxServer, find_nginx, serve_with_nginx
from _redis_probe import CommandTally, RedisCounters, ScriptTimer
from _sitegen import Manifest
from crawl_bench import BenchmarkFailed, _site

from skitter.testing._redis import RedisServer

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SPIDER = HERE / "_worker_spider.py"
TARGET = 0.7
"""Issue 6: one worker on Redis must reach 0.7x the in-memory crawl's pages/s."""
IDLE_TIMEOUT = 1.0
"""WORKER_IDLE_TIMEOUT: how long the workers wait, once the cluster is idle, to exit."""
MEMORY = 0
"""The number of workers that stands for the in-memory crawl in results."""


@dataclass(frozen=True)
class ClusterRun:
    """One crawl of the site by ``workers`` processes (``MEMORY``: one, in memory)."""

    workers: int
    pages: int
    items: int
    elapsed: float
    """From the first process's start to the last page parsed (interpreter start-up
    and imports included, the workers' idle wait at the end not)."""
    exit_wall: float
    """From the first start to the last exit, less WORKER_IDLE_TIMEOUT for workers: the
    cruder measure, which also counts the engine's idle polling and the shutdown."""
    cpu: float
    """User + system CPU of every process of the run, start-up included."""
    startup_cpu: float
    """The part of ``cpu`` spent before the spider was loaded, summed over processes."""
    nginx_cpu: float
    redis: RedisCounters
    pages_per_process: list[int] = field(default_factory=list)
    load: float = 0.0

    @property
    def label(self) -> str:
        return label(self.workers)

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.elapsed

    def figures(self) -> dict[str, float]:
        p = self.pages
        return {
            "pages_per_s": self.pages_per_s,
            "exit_pages_per_s": p / self.exit_wall,
            "cpu_per_1k": self.cpu / p * 1000,
            "startup_cpu": self.startup_cpu / max(1, self.workers),
            "redis_cpu_per_1k": self.redis.cpu / p * 1000,
            "round_trips": self.redis.reads / p,
            "evalsha": self.redis.evalsha / p,
            "commands": self.redis.commands / p,
            "nginx_cpu": self.nginx_cpu,
            "elapsed": self.elapsed,
        }


def label(workers: int) -> str:
    if workers == MEMORY:
        return "in-memory"
    return f"{workers} worker{'s' if workers > 1 else ''}"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(workers: int, start_url: str, redis_url: str, job: str, out: Path) -> list[str]:
    settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "WORKER_IDLE_TIMEOUT": IDLE_TIMEOUT,
        "LOG_LEVEL": "WARNING",
        "STATS_DUMP": "false",
    }
    command = [sys.executable, "-m", "skitter"]
    if workers == MEMORY:
        command += ["crawl", str(SPIDER)]
    else:
        command += ["worker", str(SPIDER), "--redis", redis_url, "--job", job]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return [*command, "-a", f"start_url={start_url}", "-O", str(out), "--no-progress"]


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    output: Path
    probe: Path
    log: Path
    exited: float | None = None

    def tail(self, lines: int = 15) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _spawn(workers: int, start_url: str, redis_url: str, work: Path) -> list[_Process]:
    job = f"bench-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    processes = []
    for i in range(max(1, workers)):
        out, probe, log = (work / f"{job}-{i}.{ext}" for ext in ("jsonl", "probe.json", "log"))
        with log.open("wb") as log_file:
            popen = subprocess.Popen(
                _command(workers, start_url, redis_url, job, out),
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=env | {"SKITTER_BENCH_PROBE": str(probe)},
                cwd=work,
            )
        processes.append(_Process(popen, out, probe, log))
    return processes


def _wait(processes: list[_Process], timeout: float, what: str) -> None:
    """Wait for every process, noting when each exited; kill them all on a timeout."""
    deadline = time.monotonic() + timeout
    while any(p.exited is None for p in processes):
        for p in processes:
            if p.exited is None and p.popen.poll() is not None:
                p.exited = time.monotonic()
        if time.monotonic() > deadline:
            for p in processes:
                if p.popen.poll() is None:
                    p.popen.kill()
                    p.popen.wait()
            tails = "\n".join(f"--- process {i}:\n{p.tail()}" for i, p in enumerate(processes))
            raise BenchmarkFailed(f"{what}: not finished after {timeout:.0f} s\n{tails}")
        time.sleep(0.01)


def _page_of(name: str) -> int:
    """The page an item came from: items are named ``Widget <page>-<k>``."""
    return int(name.split()[1].split("-")[0])


def _verify(
    what: str, processes: list[_Process], manifest: Manifest, nginx: NginxServer
) -> tuple[list[dict[str, Any]], list[int]]:
    """Every page crawled once and every item written once, across the processes;
    returns their probes and the pages each crawled."""
    failed = [(i, p) for i, p in enumerate(processes) if p.popen.returncode != 0]
    if failed:
        detail = "\n".join(
            f"--- process {i} (exit status {p.popen.returncode}):\n{p.tail()}" for i, p in failed
        )
        raise BenchmarkFailed(f"{what}: a process failed\n{detail}")
    probes = []
    for i, p in enumerate(processes):
        try:
            probes.append(json.loads(p.probe.read_text()))
        except (OSError, ValueError) as exc:
            raise BenchmarkFailed(f"{what}: process {i} left no probe ({exc})\n{p.tail()}") from exc
    names: Counter[str] = Counter()
    for p in processes:
        with p.output.open("rb") as lines:
            names.update(orjson.loads(line)["name"] for line in lines if line.strip())
    pages = {_page_of(name) for name in names}
    per_process = [probe["pages"] for probe in probes]
    problems = []
    missing = sorted(set(range(manifest.pages)) - pages)
    if missing:
        problems.append(f"{len(missing)} pages have no items (first: {missing[:5]})")
    if sum(per_process) != manifest.pages:
        problems.append(
            f"pages parsed {sum(per_process)} (per process {per_process}), "
            f"expected {manifest.pages}"
        )
    repeated = sum(names.values()) - len(names)
    if repeated:
        problems.append(f"{repeated} items written twice (e.g. {names.most_common(1)[0][0]!r})")
    if len(names) != manifest.items:
        problems.append(f"{len(names)} distinct items, expected {manifest.items}")
    if any(probe["last_page"] is None for probe in probes if probe["pages"]):
        problems.append("a process parsed pages but noted no last page")
    if problems:
        raise BenchmarkFailed(
            f"{what}: " + "; ".join(problems) + f"\nnginx error log:\n{nginx.log_tail()}"
        )
    return probes, per_process


def run_once(
    workers: int,
    nginx: NginxServer,
    redis_server: RedisServer,
    manifest: Manifest,
    work: Path,
) -> ClusterRun:
    """Crawl the site once with ``workers`` worker processes (``MEMORY``: in memory)."""
    what = label(workers)
    start_url = nginx.base_url + manifest.start_path
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushall()
        before = RedisCounters.read(client)
        nginx_before, cpu_before = nginx.cpu_seconds(), _children_cpu()
        started = time.monotonic()
        processes = _spawn(workers, start_url, redis_server.url, work)
        _wait(processes, 120 + manifest.pages / 10, what)
        cpu = _children_cpu() - cpu_before
        nginx_cpu = nginx.cpu_seconds() - nginx_before
        spent = RedisCounters.read(client) - before
    probes, per_process = _verify(what, processes, manifest, nginx)
    last_page = max(probe["last_page"] for probe in probes if probe["last_page"] is not None)
    last_exit = max(p.exited for p in processes if p.exited is not None)
    idle = IDLE_TIMEOUT if workers != MEMORY else 0.0
    for p in processes:
        for path in (p.output, p.probe, p.log):
            path.unlink(missing_ok=True)
    return ClusterRun(
        workers=workers,
        pages=manifest.pages,
        items=manifest.items,
        elapsed=last_page - started,
        exit_wall=last_exit - started - idle,
        cpu=cpu,
        startup_cpu=sum(probe["cpu_loaded"] for probe in probes),
        nginx_cpu=nginx_cpu,
        redis=spent,
        pages_per_process=per_process,
        load=os.getloadavg()[0],
    )


@dataclass
class Breakdown:
    """What one worker's crawl costs Redis, command by command (see ``--breakdown``)."""

    sent: Counter[str]
    inside: Counter[str]
    micros: Counter[str]


def breakdown(
    nginx: NginxServer, redis_server: RedisServer, manifest: Manifest, work: Path
) -> Breakdown:
    """Two unmeasured 1-worker crawls: one under MONITOR (what the worker sent, what the
    scripts ran), one with the slow log recording every command (how long Redis took)."""
    tally = CommandTally(redis_server.url)
    timer = ScriptTimer(redis_server.url)
    for probe in (tally, timer):
        with redis.Redis.from_url(redis_server.url) as client:
            client.flushall()
        probe.start()
        try:
            run_once(1, nginx, redis_server, manifest, work)
        finally:
            probe.stop()
    result = Breakdown(tally.sent, tally.inside, timer.micros)
    # The benchmark's own commands are not the worker's.
    for command in ("info", "flushall", "config", "slowlog", "echo"):
        result.sent.pop(command, None)
        result.micros.pop(command, None)
    return result


# -- report ---------------------------------------------------------------------------------
def summarise(results: list[ClusterRun], counts: list[int]) -> dict[int, dict[str, float]]:
    medians = {}
    for workers in counts:
        runs = [r.figures() for r in results if r.workers == workers]
        medians[workers] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return medians


def run_ratios(results: list[ClusterRun], workers: int, base: int) -> list[float]:
    """pages/s of ``workers`` over ``base``, run by run (each pair ran back to back)."""
    mine = [r.pages_per_s for r in results if r.workers == workers]
    theirs = [r.pages_per_s for r in results if r.workers == base]
    return [a / b for a, b in zip(mine, theirs, strict=True)]


_COLUMNS = (  # title, figure, format, width
    ("pages/s", "pages_per_s", "{:.0f}", 9),
    ("CPU s/1k pages", "cpu_per_1k", "{:.3f}", 16),
    ("Redis CPU s/1k", "redis_cpu_per_1k", "{:.3f}", 16),
    ("round trips/page", "round_trips", "{:.2f}", 18),
    ("EVALSHA/page", "evalsha", "{:.2f}", 14),
    ("commands/page", "commands", "{:.1f}", 15),
    ("nginx busy", "nginx_busy", "{:.0%}", 12),
)


def render(
    manifest: Manifest,
    args: argparse.Namespace,
    medians: dict[int, dict[str, float]],
    results: list[ClusterRun],
    redis_version: str,
) -> str:
    avg_kb = manifest.bytes / manifest.pages / 1024
    lines = [
        f"{manifest.pages} pages ({avg_kb:.1f} KB avg, {manifest.links / manifest.pages:.1f} "
        f"links and {manifest.items / manifest.pages:.1f} items per page), concurrency 64 "
        f"per process, median of {args.runs} run(s), {os.cpu_count()} CPUs",
        f"python {platform.python_version()}, redis-server {redis_version}, redis-py "
        f"{redis.__version__}; every process writes a feed (-O), workers "
        f"WORKER_IDLE_TIMEOUT={IDLE_TIMEOUT:g}",
        "",
        f"{'crawl':<12}" + "".join(f"{title:>{width}}" for title, _, _, width in _COLUMNS),
    ]
    for workers, m in medians.items():
        m = m | {"nginx_busy": m["nginx_cpu"] / m["elapsed"]}
        row = f"{label(workers):<12}"
        for _, key, fmt, width in _COLUMNS:
            redis_only = key in ("redis_cpu_per_1k", "round_trips", "evalsha", "commands")
            cell = "-" if workers == MEMORY and redis_only else fmt.format(m[key])
            row += f"{cell:>{width}}"
        lines.append(row)
    lines.append("")
    pairs = []
    if MEMORY in medians and 1 in medians:
        pairs.append((1, MEMORY))
    pairs += [(n, 1) for n in medians if n > 1 and 1 in medians]
    for workers, base in pairs:
        mine, theirs = medians[workers], medians[base]
        each = ", ".join(f"{x:.2f}" for x in run_ratios(results, workers, base))
        speed = mine["pages_per_s"] / theirs["pages_per_s"]
        cpu = mine["cpu_per_1k"] / theirs["cpu_per_1k"]
        name = f"{label(workers)} / {label(base)}"
        lines.append(
            f"{name:<24}pages/s {speed:.2f}x  CPU s/1k pages {cpu:.2f}x"
            f"  (pages/s run by run: {each})"
        )
    if MEMORY in medians and 1 in medians:
        ratio = medians[1]["pages_per_s"] / medians[MEMORY]["pages_per_s"]
        verdict = "met" if ratio >= TARGET else "NOT met"
        lines.append(
            f"target: 1 worker >= {TARGET:.2f}x in-memory pages/s: {ratio:.2f}x, {verdict}"
        )
    startup = ", ".join(f"{label(n)} {m['startup_cpu']:.2f}" for n, m in medians.items())
    lines.append(f"start-up CPU s per process (in CPU s/1k pages): {startup}")
    load = max(r.load for r in results)
    if load > (os.cpu_count() or 1):
        lines.append(
            f"note: load average up to {load:.1f} on {os.cpu_count()} CPUs: other work took "
            "CPU from the crawls and pages/s moved with it; CPU s/1k pages is steadier"
        )
    last = {r.workers: r.pages_per_process for r in results}
    spread = "; ".join(f"{label(n)} {last[n]}" for n in last if n > 1)
    if spread:
        lines.append(f"pages per worker (last run): {spread}")
    return "\n".join(lines)


def render_breakdown(tally: Breakdown, pages: int) -> str:
    sent, inside, micros = tally.sent, tally.inside, tally.micros
    lines = ["", f"1 worker, {pages} pages (counted by MONITOR, timed by SLOWLOG): Redis per page"]
    lines.append(
        f"  sent by the worker, per page (total {sum(sent.values()) / pages:.2f} calls, "
        f"{sum(micros.values()) / pages:.1f} us executing):"
    )
    lines += [
        f"    {n / pages:8.3f}  {micros[command] / pages:6.1f} us  {command}"
        for command, n in sent.most_common()
    ]
    lines.append(f"  run inside the scripts, per page (total {sum(inside.values()) / pages:.1f}):")
    lines += [f"    {n / pages:8.3f}  {command}" for command, n in inside.most_common(12)]
    return "\n".join(lines)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000, help="pages in the site")
    parser.add_argument("--runs", type=int, default=3, help="runs per crawl (median)")
    parser.add_argument("--workers", default="1,2,4", help="numbers of workers to run")
    parser.add_argument("--seed", type=int, default=1, help="site generator seed")
    parser.add_argument("--site-dir", type=Path, help="generate (or reuse) the site here")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--breakdown", action="store_true", help="add 1-worker crawls under MONITOR and SLOWLOG"
    )
    args = parser.parse_args(argv)
    try:
        args.worker_counts = sorted({int(n) for n in args.workers.split(",")})
    except ValueError:
        parser.error(f"--workers takes numbers like 1,2,4; got {args.workers!r}")
    if args.pages < 2 or args.runs < 1 or min(args.worker_counts) < 1:
        parser.error("--pages must be at least 2, --runs and --workers positive")
    args.compare_hosts = None  # crawl_bench._site: the plain one-host site
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        find_nginx()
    except NginxMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    if shutil.which("redis-server") is None:
        print("redis-server is not installed: apt-get install -y redis-server", file=sys.stderr)
        return 2
    counts = [MEMORY, *args.worker_counts]
    results: list[ClusterRun] = []
    tally: Breakdown | None = None
    with (
        tempfile.TemporaryDirectory(prefix="skitter-redis-bench-") as tmp_name,
        RedisServer(aof=False) as redis_server,
    ):
        tmp = Path(tmp_name)
        root, manifest = _site(args, tmp, 1)
        with serve_with_nginx(root, tmp / "nginx") as nginx:
            redis_version = redis.Redis.from_url(redis_server.url).info()["redis_version"]
            try:
                for run in range(1, args.runs + 1):
                    for workers in counts:
                        result = run_once(workers, nginx, redis_server, manifest, tmp)
                        results.append(result)
                        m = result.figures()
                        print(
                            f"run {run}/{args.runs} {result.label}: {m['pages_per_s']:.0f} "
                            f"pages/s ({m['exit_pages_per_s']:.0f} start to exit), "
                            f"{result.cpu:.2f} s CPU, {m['round_trips']:.2f} round trips/page, "
                            f"load average {result.load:.1f}",
                            file=sys.stderr,
                        )
                if args.breakdown:
                    tally = breakdown(nginx, redis_server, manifest, tmp)
            except BenchmarkFailed as exc:
                print(f"FAILED: {exc}", file=sys.stderr)
                return 1

    medians = summarise(results, counts)
    print(render(manifest, args, medians, results, redis_version))
    if tally is not None:
        print(render_breakdown(tally, manifest.pages))
    if args.json:
        report = {
            "site": asdict(manifest),
            "cpus": os.cpu_count(),
            "redis_version": redis_version,
            "target": TARGET,
            "median": {label(n): m for n, m in medians.items()},
            "runs": [asdict(r) for r in results],
        }
        if tally is not None:
            report["breakdown"] = {
                "sent": dict(tally.sent),
                "inside": dict(tally.inside),
                "micros": dict(tally.micros),
            }
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
