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

``--shards N`` (issue 14) adds, after each number of workers, a run of as many workers
on a job split over N shards (``skitter worker --shards N``): what sharding costs a
page. Shards split a job by host name, so the site then spans two (``127.0.0.1`` and
``localhost``, on two ports of nginx) for every run, sharded or not, so that rows
compare; with ``--breakdown`` a sharded 1-worker crawl is broken down too, by shard.
``--cluster`` runs the workers on a real Redis Cluster (``--redis-cluster``) of
``max(3, N)`` private masters instead of one node, summing ``INFO`` over the masters
and showing each master's share::

    PYTHONPATH=src .venv/bin/python benchmarks/redis_bench.py --pages 5000 --runs 1 \\
        --workers 1,2 --shards 2 [--breakdown | --cluster]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
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
from _nginx import NginxMissing, NginxServer, find_nginx, serve_with_nginx
from _redis_probe import CommandTally, RedisCounters, ScriptTimer
from _redis_report import (
    MEMORY,
    TARGET,
    Breakdown,
    Crawl,
    label,
    render,
    render_breakdown,
    summarise,
)
from _redis_target import RedisTarget
from _sitegen import Manifest
from crawl_bench import BenchmarkFailed, _site

from skitter.redis import JobKeys

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SPIDER = HERE / "_worker_spider.py"
IDLE_TIMEOUT = 1.0
"""WORKER_IDLE_TIMEOUT: how long the workers wait, once the cluster is idle, to exit."""
SHARD_NAMES = ("127.0.0.1", "localhost")
"""The host names of the site of ``--shards``: one per port, on different shards of 2."""


@dataclass(frozen=True)
class ClusterRun:
    """One crawl of the site by ``workers`` processes (``MEMORY``: one, in memory)."""

    workers: int
    shards: int
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
    """Summed over the nodes (the masters of a cluster)."""
    redis_nodes: list[RedisCounters] = field(default_factory=list)
    """Each node's part of ``redis``, in the target's order (``figures``: busiest first)."""
    pages_per_process: list[int] = field(default_factory=list)
    load: float = 0.0

    @property
    def crawl(self) -> Crawl:
        return self.workers, self.shards

    @property
    def label(self) -> str:
        return label(self.crawl)

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
        } | {
            f"{name}@{k}": value
            # busiest first: a fresh job's shards land on masters by its name's hash, so
            # only "the busiest master" means the same thing from run to run
            for k, node in enumerate(sorted(self.redis_nodes, key=lambda n: -n.cpu))
            for name, value in (
                ("redis_cpu_per_1k", node.cpu / p * 1000),
                ("commands", node.commands / p),
            )
        }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(crawl: Crawl, start_url: str, redis_args: list[str], job: str, out: Path) -> list[str]:
    settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "WORKER_IDLE_TIMEOUT": IDLE_TIMEOUT,
        "LOG_LEVEL": "WARNING",
        "STATS_DUMP": "false",
    }
    workers, shards = crawl
    command = [sys.executable, "-m", "skitter"]
    if workers == MEMORY:
        command += ["crawl", str(SPIDER)]
    else:
        command += ["worker", str(SPIDER), *redis_args, "--job", job]
        if shards > 1:
            command += ["--shards", str(shards)]
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


def _spawn(crawl: Crawl, start_url: str, redis_args: list[str], work: Path) -> list[_Process]:
    job = f"bench-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    processes = []
    for i in range(max(1, crawl[0])):
        out, probe, log = (work / f"{job}-{i}.{ext}" for ext in ("jsonl", "probe.json", "log"))
        with log.open("wb") as log_file:
            popen = subprocess.Popen(
                _command(crawl, start_url, redis_args, job, out),
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
    hosts: Counter[str] = Counter()
    for probe in probes:
        hosts.update(probe["hosts"])
    if hosts != _pages_per_host(manifest, nginx):
        problems.append(
            f"pages per host {dict(hosts)}, expected {_pages_per_host(manifest, nginx)}"
        )
    if problems:
        raise BenchmarkFailed(
            f"{what}: " + "; ".join(problems) + f"\nnginx error log:\n{nginx.log_tail()}"
        )
    return probes, per_process


def _pages_per_host(manifest: Manifest, nginx: NginxServer) -> Counter[str]:
    """``host:port`` -> pages a complete crawl fetches there: each page from its own."""
    if not manifest.ports:
        return Counter({nginx.base_url.removeprefix("http://"): manifest.pages})
    netlocs = [manifest.origin(k).removeprefix("http://") for k in range(manifest.hosts)]
    return Counter(dict(zip(netlocs, manifest.pages_per_host(), strict=True)))


def start_url(manifest: Manifest, nginx: NginxServer) -> str:
    origin = manifest.origin(0) if manifest.ports else nginx.base_url
    return origin + manifest.start_path


def run_once(
    crawl: Crawl,
    nginx: NginxServer,
    target: RedisTarget,
    manifest: Manifest,
    work: Path,
) -> ClusterRun:
    """Crawl the site once with ``crawl``'s workers and shards (``MEMORY``: in memory)."""
    what = label(crawl)
    workers, shards = crawl
    target.flushall()
    before = target.read()
    nginx_before, cpu_before = nginx.cpu_seconds(), _children_cpu()
    started = time.monotonic()
    processes = _spawn(crawl, start_url(manifest, nginx), target.worker_args, work)
    _wait(processes, 120 + manifest.pages / 10, what)
    cpu = _children_cpu() - cpu_before
    nginx_cpu = nginx.cpu_seconds() - nginx_before
    nodes = [after - first for after, first in zip(target.read(), before, strict=True)]
    probes, per_process = _verify(what, processes, manifest, nginx)
    last_page = max(probe["last_page"] for probe in probes if probe["last_page"] is not None)
    last_exit = max(p.exited for p in processes if p.exited is not None)
    idle = IDLE_TIMEOUT if workers != MEMORY else 0.0
    for p in processes:
        for path in (p.output, p.probe, p.log):
            path.unlink(missing_ok=True)
    return ClusterRun(
        workers=workers,
        shards=shards,
        pages=manifest.pages,
        items=manifest.items,
        elapsed=last_page - started,
        exit_wall=last_exit - started - idle,
        cpu=cpu,
        startup_cpu=sum(probe["cpu_loaded"] for probe in probes),
        nginx_cpu=nginx_cpu,
        redis=sum(nodes, RedisCounters.zero()),
        redis_nodes=nodes,
        pages_per_process=per_process,
        load=os.getloadavg()[0],
    )


def breakdown(
    shards: int, nginx: NginxServer, target: RedisTarget, manifest: Manifest, work: Path
) -> Breakdown:
    """Two unmeasured 1-worker crawls: one under MONITOR (what the worker sent, what the
    scripts ran), one with the slow log recording every command (how long Redis took)."""
    tally = CommandTally(target.url)
    timer = ScriptTimer(target.url)
    for probe in (tally, timer):
        target.flushall()
        probe.start()
        try:
            run_once((1, shards), nginx, target, manifest, work)
        finally:
            probe.stop()
    result = Breakdown(
        shards,
        tally.sent,
        tally.inside,
        timer.micros,
        tally.sent_by_shard,
        tally.inside_by_shard,
        timer.micros_by_shard,
    )
    # The benchmark's own commands are not the worker's.
    for command in ("info", "flushall", "config", "slowlog", "echo"):
        result.sent.pop(command, None)
        result.micros.pop(command, None)
    return result


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000, help="pages in the site")
    parser.add_argument("--runs", type=int, default=3, help="runs per crawl (median)")
    parser.add_argument("--workers", default="1,2,4", help="numbers of workers to run")
    parser.add_argument(
        "--shards",
        type=int,
        default=1,
        help="also run each number of workers on a job of N shards (2 or more; the site "
        "then spans two host names for every run)",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run the workers on a Redis Cluster of max(3, shards) private masters",
    )
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
    if args.shards < 1 or args.shards > 1024:
        parser.error(f"--shards takes 2 to 1024 shards (1: none), got {args.shards}")
    args.site_shards = _shards_of_names(args.shards)
    if args.shards > 1 and len(set(args.site_shards)) < len(SHARD_NAMES):
        parser.error(
            f"--shards {args.shards} puts the site's hosts {', '.join(SHARD_NAMES)} on one shard "
            f"(shards {args.site_shards}): the sharded rows would measure one shard; "
            "use another number (2, 4, 5 ...)"
        )
    if args.breakdown and args.cluster:
        parser.error("--breakdown reads MONITOR and the slow log of one node: not with --cluster")
    args.compare_hosts = None  # crawl_bench._site: an absolute-link site only for --shards
    args.idle_timeout = IDLE_TIMEOUT
    return args


def _shards_of_names(shards: int) -> list[int]:
    """The shard each of the site's host names falls on in a job of ``shards``."""
    keys = JobKeys.for_job("bench", "bench", shards=shards)
    return [keys.shard_of(name) for name in SHARD_NAMES]


def _crawls(args: argparse.Namespace) -> list[Crawl]:
    """The rows, in the order each run goes through them: in memory, then each number
    of workers, unsharded and (``--shards``) sharded, back to back."""
    shard_counts = [1, args.shards] if args.shards > 1 else [1]
    return [(MEMORY, 1)] + [(w, s) for w in args.worker_counts for s in shard_counts]


def _check_names() -> str | None:
    """Why the two-name site of ``--shards`` cannot be served here, if it cannot: nginx
    listens on 127.0.0.1 only, so every name must resolve there and nowhere else."""
    for name in SHARD_NAMES:
        try:
            found = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
        except OSError as exc:
            return f"{name} does not resolve ({exc})"
        if found != {"127.0.0.1"}:
            return f"{name} resolves to {sorted(found)}, not 127.0.0.1 only (see /etc/hosts)"
    return None


def _measure(
    args: argparse.Namespace, target: RedisTarget, tmp: Path
) -> tuple[Manifest, list[ClusterRun], list[Breakdown]]:
    """Every run of every crawl, interleaved, then the breakdowns."""
    if args.shards > 1:
        root, manifest = _site(args, tmp, len(SHARD_NAMES), SHARD_NAMES)
    else:
        root, manifest = _site(args, tmp, 1)
    results: list[ClusterRun] = []
    tallies: list[Breakdown] = []
    with serve_with_nginx(root, tmp / "nginx", manifest.ports) as nginx:
        for run in range(1, args.runs + 1):
            for crawl in _crawls(args):
                result = run_once(crawl, nginx, target, manifest, tmp)
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
            for shards in sorted({1, args.shards}):
                tallies.append(breakdown(shards, nginx, target, manifest, tmp))
    return manifest, results, tallies


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
    if args.cluster and shutil.which("redis-cli") is None:
        print("--cluster needs redis-cli: apt-get install -y redis-tools", file=sys.stderr)
        return 2
    if args.shards > 1 and (problem := _check_names()):
        print(f"--shards needs the site's second host name: {problem}", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="skitter-redis-bench-") as tmp_name,
        RedisTarget(masters=args.shards if args.cluster else 0) as target,
    ):
        redis_name = target.describe()
        try:
            manifest, results, tallies = _measure(args, target, Path(tmp_name))
        except BenchmarkFailed as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            return 1

    medians = summarise(results, _crawls(args))
    print(render(manifest, args, medians, results, redis_name))
    for tally in tallies:
        print(render_breakdown(tally, manifest.pages))
    if args.json:
        report = {
            "site": asdict(manifest),
            "cpus": os.cpu_count(),
            "redis": redis_name,
            "target": TARGET,
            "median": {label(crawl): m for crawl, m in medians.items()},
            "runs": [asdict(r) for r in results],
            "breakdowns": [tally.as_json() for tally in tallies],
        }
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
