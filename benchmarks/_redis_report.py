"""The tables ``redis_bench.py`` prints: one row per crawl (workers, shards), the ratios
between rows that ran back to back, and the ``--breakdown`` by command and by shard.

A crawl is ``(workers, shards)``; ``(MEMORY, 1)`` is the in-memory crawl. The figures
are the medians of each crawl's runs (``ClusterRun.figures``), whose keys
``redis_cpu_per_1k@k`` and ``commands@k`` are the k-th busiest node's part (a cluster's
masters).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from _sitegen import Manifest

__all__ = [
    "MEMORY",
    "TARGET",
    "Breakdown",
    "Crawl",
    "label",
    "render",
    "render_breakdown",
    "summarise",
]

TARGET = 0.7
"""Issue 6: one worker on Redis must reach 0.7x the in-memory crawl's pages/s."""
MEMORY = 0
"""The number of workers that stands for the in-memory crawl in results."""

Crawl = tuple[int, int]
"""What one row measures: (workers, shards)."""
Medians = dict[Crawl, dict[str, float]]


class Run(Protocol):
    """What the report reads of one run (``redis_bench.ClusterRun``)."""

    @property
    def crawl(self) -> Crawl: ...
    @property
    def pages_per_s(self) -> float: ...
    @property
    def load(self) -> float: ...
    @property
    def pages_per_process(self) -> list[int]: ...
    def figures(self) -> dict[str, float]: ...


def label(crawl: Crawl) -> str:
    workers, shards = crawl
    if workers == MEMORY:
        return "in-memory"
    name = f"{workers} worker{'s' if workers > 1 else ''}"
    return name + (f", {shards} shards" if shards > 1 else "")


def summarise(results: Sequence[Run], crawls: list[Crawl]) -> Medians:
    medians = {}
    for crawl in crawls:
        runs = [r.figures() for r in results if r.crawl == crawl]
        medians[crawl] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return medians


def run_ratios(results: Sequence[Run], crawl: Crawl, base: Crawl) -> list[float]:
    """pages/s of ``crawl`` over ``base``, run by run (each pair ran back to back)."""
    mine = [r.pages_per_s for r in results if r.crawl == crawl]
    theirs = [r.pages_per_s for r in results if r.crawl == base]
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
_REDIS_ONLY = ("redis_cpu_per_1k", "round_trips", "evalsha", "commands")
_WIDTH = 22


def _pairs(crawls: list[Crawl]) -> list[tuple[Crawl, Crawl]]:
    """The rows to compare: 1 worker with in-memory, N workers with 1 worker, and each
    sharded crawl with the same workers unsharded and with 1 sharded worker."""
    pairs = []
    if (MEMORY, 1) in crawls and (1, 1) in crawls:
        pairs.append(((1, 1), (MEMORY, 1)))
    for workers, shards in crawls:
        if workers > 1 and (1, shards) in crawls:
            pairs.append(((workers, shards), (1, shards)))
    pairs += [((w, s), (w, 1)) for w, s in crawls if s > 1 and (w, 1) in crawls]
    return pairs


def render(
    manifest: Manifest,
    args: argparse.Namespace,
    medians: Medians,
    results: Sequence[Run],
    redis_name: str,
) -> str:
    avg_kb = manifest.bytes / manifest.pages / 1024
    lines = [
        f"{manifest.pages} pages ({avg_kb:.1f} KB avg, {manifest.links / manifest.pages:.1f} "
        f"links and {manifest.items / manifest.pages:.1f} items per page), concurrency 64 "
        f"per process, median of {args.runs} run(s), {os.cpu_count()} CPUs",
        f"python {platform.python_version()}, {redis_name}, redis-py "
        f"{redis.__version__}; every process writes a feed (-O), workers "
        f"WORKER_IDLE_TIMEOUT={args.idle_timeout:g}",
    ]
    if manifest.ports:
        origins = ", ".join(manifest.origin(k) for k in range(manifest.hosts))
        lines.append(f"the site on {manifest.hosts} hosts for every row: {origins}")
        if args.shards > 1:
            lines.append(
                f"sharded rows: the hosts on shards {args.site_shards} of {args.shards} "
                "(JobKeys.shard_of: CRC-32 of the host)"
            )
    lines += [
        "",
        f"{'crawl':<{_WIDTH}}" + "".join(f"{title:>{width}}" for title, _, _, width in _COLUMNS),
    ]
    for crawl, m in medians.items():
        m = m | {"nginx_busy": m["nginx_cpu"] / m["elapsed"]}
        row = f"{label(crawl):<{_WIDTH}}"
        for _, key, fmt, width in _COLUMNS:
            cell = "-" if crawl[0] == MEMORY and key in _REDIS_ONLY else fmt.format(m[key])
            row += f"{cell:>{width}}"
        lines.append(row)
    lines.append("")
    lines += _ratio_lines(medians, results)
    lines += _node_lines(medians)
    lines += _footer(medians, results)
    return "\n".join(lines)


def _ratio_lines(medians: Medians, results: Sequence[Run]) -> list[str]:
    lines = []
    for crawl, base in _pairs(list(medians)):
        mine, theirs = medians[crawl], medians[base]
        each = ", ".join(f"{x:.2f}" for x in run_ratios(results, crawl, base))
        speed = mine["pages_per_s"] / theirs["pages_per_s"]
        cpu = mine["cpu_per_1k"] / theirs["cpu_per_1k"]
        line = f"{label(crawl) + ' / ' + label(base):<44}pages/s {speed:.2f}x  CPU {cpu:.2f}x"
        if crawl[1] != base[1]:  # the cost of sharding, in Redis's own figures
            line += (
                f"  Redis CPU {mine['redis_cpu_per_1k'] / theirs['redis_cpu_per_1k']:.2f}x"
                f"  round trips/page {mine['round_trips'] - theirs['round_trips']:+.2f}"
                f"  commands/page {mine['commands'] - theirs['commands']:+.1f}"
            )
        lines.append(f"{line}  (pages/s run by run: {each})")
    if (MEMORY, 1) in medians and (1, 1) in medians:
        ratio = medians[1, 1]["pages_per_s"] / medians[MEMORY, 1]["pages_per_s"]
        verdict = "met" if ratio >= TARGET else "NOT met"
        lines.append(
            f"target: 1 worker >= {TARGET:.2f}x in-memory pages/s: {ratio:.2f}x, {verdict}"
        )
    return lines


def _node_lines(medians: Medians) -> list[str]:
    """Each node's share of a crawl's Redis work (a cluster's masters), and the pages/s
    at which the busiest one would be at 100 % of its core."""
    nodes = sorted({int(key.split("@")[1]) for key in next(iter(medians.values())) if "@" in key})
    lines = ["pages/s at 100 % of one Redis core (1000 / Redis CPU s/1k of the busiest node):"]
    for crawl, m in medians.items():
        if crawl[0] == MEMORY:
            continue
        cpus = [m[f"redis_cpu_per_1k@{k}"] for k in nodes]
        line = f"  {label(crawl):<{_WIDTH}}{1000 / max(max(cpus), 1e-9):>8.0f}"
        if len(nodes) > 1:
            cpu_split = " / ".join(f"{cpu:.3f}" for cpu in cpus)
            command_split = " / ".join(f"{m[f'commands@{k}']:.1f}" for k in nodes)
            line += (
                f"   per master, busiest first: Redis CPU s/1k {cpu_split}, "
                f"commands/page {command_split}"
            )
        lines.append(line)
    return lines


def _footer(medians: Medians, results: Sequence[Run]) -> list[str]:
    lines = []
    startup = ", ".join(f"{label(c)} {m['startup_cpu']:.2f}" for c, m in medians.items())
    lines.append(f"start-up CPU s per process (in CPU s/1k pages): {startup}")
    load = max(r.load for r in results)
    if load > (os.cpu_count() or 1):
        lines.append(
            f"note: load average up to {load:.1f} on {os.cpu_count()} CPUs: other work took "
            "CPU from the crawls and pages/s moved with it; CPU s/1k pages is steadier"
        )
    last = {r.crawl: r.pages_per_process for r in results}
    spread = "; ".join(f"{label(c)} {last[c]}" for c in last if c[0] > 1)
    if spread:
        lines.append(f"pages per worker (last run): {spread}")
    return lines


@dataclass
class Breakdown:
    """What one worker's crawl costs Redis, command by command (see ``--breakdown``),
    and with ``shards`` above 1, shard by shard."""

    shards: int
    sent: Counter[str]
    inside: Counter[str]
    micros: Counter[str]
    sent_by_shard: Counter[int]
    inside_by_shard: Counter[int]
    micros_by_shard: Counter[int]

    def as_json(self) -> dict[str, Any]:
        # not dataclasses.asdict: it rebuilds a Counter from (key, value) pairs, as keys
        return {
            name: dict(value) if isinstance(value, Counter) else value
            for name, value in vars(self).items()
        }


def render_breakdown(tally: Breakdown, pages: int) -> str:
    sent, inside, micros = tally.sent, tally.inside, tally.micros
    lines = [
        "",
        f"{label((1, tally.shards))}, {pages} pages (counted by MONITOR, timed by SLOWLOG): "
        "Redis per page",
        f"  sent by the worker, per page (total {sum(sent.values()) / pages:.2f} calls, "
        f"{sum(micros.values()) / pages:.1f} us executing):",
    ]
    lines += [
        f"    {n / pages:8.3f}  {micros[command] / pages:6.1f} us  {command}"
        for command, n in sent.most_common()
    ]
    lines.append(f"  run inside the scripts, per page (total {sum(inside.values()) / pages:.1f}):")
    lines += [f"    {n / pages:8.3f}  {command}" for command, n in inside.most_common(12)]
    if tally.shards > 1:
        total = sum(tally.micros_by_shard.values()) or 1
        lines.append("  by shard (the hash tag of each command's first key), per page:")
        lines += [
            f"    shard {k}: {tally.sent_by_shard[k] / pages:.2f} calls sent, "
            f"{tally.inside_by_shard[k] / pages:.1f} commands inside scripts, "
            f"{tally.micros_by_shard[k] / pages:.1f} us executing "
            f"({tally.micros_by_shard[k] / total:.0%} of Redis's time)"
            for k in range(tally.shards)
        ]
    return "\n".join(lines)
