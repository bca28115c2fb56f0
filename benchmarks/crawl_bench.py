"""Crawl benchmark: skitter against a hand-written aiohttp loop and against Scrapy.

Generates a synthetic static site (see ``_sitegen.py``), serves it with nginx on
127.0.0.1, and crawls it with each crawler in its own subprocess, ``--runs`` times,
interleaved. Every run must fetch every page and extract every item, or the benchmark
fails. Prints, per crawler, the median pages/s, CPU seconds per 1,000 pages, peak RSS
and nginx's CPU time, then skitter's ratios to the others, all measured in this run::

    PYTHONPATH=src .venv/bin/python benchmarks/crawl_bench.py              # 20,000 pages
    PYTHONPATH=src .venv/bin/python benchmarks/crawl_bench.py --pages 2000 --runs 1

``--hosts N`` spreads the site over N ports of 127.0.0.1 (a host is a port), with
every link absolute to its page's own port; skitter runs with one download slot per
port. ``--compare-hosts 1,8`` crawls a 1-host and an 8-host version of the same site in
one invocation (runs interleaved) and prints each crawler's 8-host/1-host ratios: the
cost of spreading a crawl over slots, which should stay under 10 %.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _nginx import (
    NginxMissing,
    NginxServer,
    find_nginx,
    ports_free,
    reserve_ports,
    serve_with_nginx,
)
from _report import MARKER
from _sitegen import DEFAULT_NAME, LINKS, Manifest, generate_site, load_manifest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CRAWLERS = (
    "skitter-cli",
    "raw-whole",
    "skitter",
    "skitter-job",
    "skitter-cache",
    "skitter-sessions",
    "skitter-httpx",
    "skitter-curl",
    "raw",
    "scrapy",
    "crawlee",
)
WHOLE_ROWS = ("skitter-cli", "raw-whole")
"""Issue 29: what users run (``skitter crawl spider.py -o items.jsonl``) against the raw
loop, both measured as whole processes (start-up and imports included)."""
TRANSPORT_ROWS = ("skitter-httpx", "skitter-curl")
"""Issue 17: skitter through each optional transport, compared with the default's row."""
OPTIONAL = {"scrapy": "scrapy", "crawlee": "crawlee"}
"""Contenders skipped (when not asked for by name) if their package is not installed."""
TARGETS = {
    "raw": ("pages_per_s", 0.9),
    "scrapy": ("pages_per_s", 10.0),
    "crawlee": ("pages_per_s", 5.0),
}
"""Issue 18: skitter's pages/s over each contender's, measured in the same run."""
RSS_TARGET = 1.5
"""Issue 18: skitter's peak RSS at most this many times the raw loop's."""
METRICS = ("pages_per_s", "cpu_per_1k", "maxrss_mb", "nginx_cpu")
HOSTS_TARGET = 0.9
"""Issue 4: skitter's pages/s over 8 hosts must be at least 0.9x its 1-host figure."""
BUSY_FLOOR = 0.85
"""Below this CPU/wall ratio a CPU-bound crawler was kept waiting (see RunResult.busy)."""
SLOTS_CHECKED_FROM = 1000
"""Pages from which skitter's sampled slots must include every host (see _check_hosts)."""


class BenchmarkFailed(RuntimeError):
    """A crawler crashed, or missed pages or items."""


@dataclass(frozen=True)
class RunResult:
    crawler: str
    hosts: int
    pages: int
    items: int
    elapsed: float
    cpu: float
    maxrss_mb: float
    nginx_cpu: float
    load: float
    """The machine's 1-minute load average when the run ended."""

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.elapsed

    @property
    def cpu_per_1k(self) -> float:
        return self.cpu / self.pages * 1000

    @property
    def busy(self) -> float:
        """The crawler's CPU over wall time: near 1 for a CPU-bound crawler that had a
        CPU to itself; lower when it waited, for the server or for other processes."""
        return self.cpu / self.elapsed

    def figures(self) -> dict[str, float]:
        return {m: getattr(self, m) for m in METRICS} | {
            "elapsed": self.elapsed,
            "cpu": self.cpu,
            "busy": self.busy,
            "load": self.load,
        }


def _command(crawler: str, start_url: str, concurrency: int, loop: str) -> list[str]:
    if crawler == "scrapy":
        settings = {
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "LOG_LEVEL": "WARNING",
            "ROBOTSTXT_OBEY": False,
            "TELNETCONSOLE_ENABLED": False,
        }
        command = [sys.executable, "-m", "scrapy", "runspider", str(HERE / "_crawl_scrapy.py")]
        command += ["-a", f"start_url={start_url}"]
        for name, value in settings.items():
            command += ["-s", f"{name}={value}"]
        return command
    script = HERE / f"_crawl_{crawler.replace('-', '_')}.py"
    command = [sys.executable, str(script), start_url, "--concurrency", str(concurrency)]
    return command + ([] if crawler == "crawlee" else ["--loop", loop])


def run_once(
    crawler: str,
    nginx: NginxServer,
    manifest: Manifest,
    concurrency: int,
    cwd: Path,
    loop: str = "asyncio",
) -> RunResult:
    """Crawl the site once in a fresh process; raise BenchmarkFailed unless complete."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    start_url = nginx.base_url + manifest.start_path
    timeout = 120 + manifest.pages / 20
    cpu_before = nginx.cpu_seconds()
    try:
        done = subprocess.run(
            _command(crawler, start_url, concurrency, loop),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchmarkFailed(f"{crawler}: no result after {timeout:.0f} s") from exc
    nginx_cpu = nginx.cpu_seconds() - cpu_before
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.splitlines()[-30:])
        raise BenchmarkFailed(f"{crawler}: exit status {done.returncode}, no result\n{tail}")
    data: dict[str, Any] = json.loads(lines[-1][len(MARKER) :])
    if data["pages"] != manifest.pages or data["items"] != manifest.items:
        raise BenchmarkFailed(
            f"{crawler}: crawled {data['pages']} of {manifest.pages} pages and "
            f"{data['items']} of {manifest.items} items ({_extra(data)})\n"
            f"nginx error log:\n{nginx.log_tail()}"
        )
    _check_hosts(crawler, data, nginx, manifest)
    return RunResult(
        crawler,
        manifest.hosts,
        data["pages"],
        data["items"],
        data["elapsed"],
        data["cpu"],
        data["maxrss_mb"],
        nginx_cpu,
        os.getloadavg()[0],
    )


def _check_hosts(
    crawler: str, data: dict[str, Any], nginx: NginxServer, manifest: Manifest
) -> None:
    """Every page came from the port it lives on, and skitter gave each port a slot.

    Pages per host must match the site exactly (a page fetched through the wrong port
    would also have changed the page count). skitter's slots are sampled every 200
    pages: a slot that is not one of the site's ``host:port`` (slots by hostname, say)
    fails the run, and so does a missing one once the sampling is dense enough to
    have seen all.
    """
    expected = {
        f"127.0.0.1:{port}": n
        for port, n in zip(nginx.ports, manifest.pages_per_host(), strict=True)
    }
    if data.get("hosts") != expected:
        raise BenchmarkFailed(
            f"{crawler}: pages per host {data.get('hosts')}, expected {expected} "
            "(every page from its own port)"
        )
    if not crawler.startswith("skitter") or crawler == "skitter-cli":
        return  # the CLI's crawl runs in a grandchild: its slots are not sampled
    slots = set(data.get("slots", ()))
    stray = slots - expected.keys()
    missing = expected.keys() - slots if manifest.pages >= SLOTS_CHECKED_FROM else set()
    if stray or missing:
        raise BenchmarkFailed(
            f"skitter: download slots {sorted(slots)}, expected one per host:port "
            f"{sorted(expected)} (DOWNLOAD_SLOT_BY=netloc)"
        )


def _extra(data: dict[str, Any]) -> str:
    skip = {"pages", "items", "elapsed", "cpu", "maxrss_mb", "stats"}
    return ", ".join(f"{k}={v}" for k, v in data.items() if k not in skip) or "no details"


def _site(
    args: argparse.Namespace, tmp: Path, hosts: int, names: Sequence[str] = (DEFAULT_NAME,)
) -> tuple[Path, Manifest]:
    """The site to crawl for ``hosts`` hosts: reused from ``--site-dir`` when it has the
    same pages, seed, number of hosts and host names and its ports are free; generated
    otherwise.

    The plain single-host site (relative links) lives in the site directory itself;
    an absolute-link site over N ports (``--hosts`` above 1, and every site of
    ``--compare-hosts``) in its ``hosts-N`` subdirectory, ``hosts-N-<name>-...`` when
    its links name other hosts than 127.0.0.1 (``_sitegen``'s ``names``).
    """
    absolute = args.compare_hosts is not None or hosts > 1
    root = args.site_dir or tmp / "site"
    if args.links != LINKS:
        root = root / f"links-{args.links}"
    if absolute:
        named = "" if tuple(names) == (DEFAULT_NAME,) else "-" + "-".join(names)
        root = root / f"hosts-{hosts}{named}"
    manifest = load_manifest(root)
    wanted = (args.pages, args.seed, hosts if absolute else 0, tuple(names), args.links)
    if (
        manifest
        and (
            manifest.pages,
            manifest.seed,
            len(manifest.ports),
            manifest.names,
            manifest.links_per_page,
        )
        == wanted
    ):
        if ports_free(manifest.ports):
            print(f"reusing the site in {root}", file=sys.stderr)
            return root, manifest
        print(f"the ports of the site in {root} are in use: regenerating", file=sys.stderr)
    started = time.perf_counter()
    ports = reserve_ports(hosts) if absolute else []
    manifest = generate_site(root, args.pages, args.seed, ports, names, args.links)
    took = time.perf_counter() - started
    where = f" on ports {', '.join(map(str, ports))}" if ports else ""
    print(f"generated {manifest.pages} pages in {root}{where} ({took:.1f} s)", file=sys.stderr)
    return root, manifest


def summarise(
    results: list[RunResult], crawlers: list[str], host_counts: list[int]
) -> dict[tuple[str, int], dict[str, float]]:
    """The median of each figure over the runs, per crawler and number of hosts."""
    medians = {}
    for crawler in crawlers:
        for hosts in host_counts:
            runs = [r.figures() for r in results if (r.crawler, r.hosts) == (crawler, hosts)]
            medians[crawler, hosts] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return medians


def host_ratios(
    medians: dict[tuple[str, int], dict[str, float]], host_counts: list[int]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per crawler, each host count's median figures divided by the first count's
    (``"8/1"``: 8 hosts over 1 host)."""
    base = host_counts[0]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (crawler, hosts), mine in medians.items():
        if hosts == base:
            continue
        theirs = medians[crawler, base]
        out.setdefault(crawler, {})[f"{hosts}/{base}"] = {
            m: mine[m] / theirs[m] if theirs[m] else float("nan") for m in METRICS
        }
    return out


def run_ratios(results: list[RunResult], crawler: str, hosts: int, base: int) -> list[float]:
    """pages/s on ``hosts`` hosts over pages/s on ``base`` hosts, run by run: the runs
    are interleaved, so each pair saw about the same load on the machine."""
    mine = [r.pages_per_s for r in results if (r.crawler, r.hosts) == (crawler, hosts)]
    theirs = [r.pages_per_s for r in results if (r.crawler, r.hosts) == (crawler, base)]
    return [a / b for a, b in zip(mine, theirs, strict=True)]


def ratios(medians: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """skitter's figures divided by each other crawler's."""
    mine = medians.get("skitter", {})

    def divide(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
        return {m: a[m] / b[m] if b[m] else float("nan") for m in METRICS}

    out = {
        f"skitter/{other}": divide(mine, theirs)
        for other, theirs in medians.items()
        if mine
        if other not in ("skitter", "skitter-job", *TRANSPORT_ROWS, *WHOLE_ROWS)
    }
    if "skitter-cli" in medians and "raw-whole" in medians:
        out["skitter-cli/raw-whole"] = divide(medians["skitter-cli"], medians["raw-whole"])
    if "skitter-job" in medians:  # issue 5: a job directory against the memory frontier
        out["skitter-job/skitter"] = divide(medians["skitter-job"], mine)
    for row in TRANSPORT_ROWS:  # issue 17: what each transport costs against the default
        if row in medians:
            out[f"{row}/skitter"] = divide(medians[row], mine)
    return out


def _versions(crawlers: list[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    names = {crawler: "skitter" for crawler in CRAWLERS if crawler.startswith("skitter")}
    names.update(
        {"raw": "aiohttp", "raw-whole": "aiohttp", "scrapy": "scrapy", "crawlee": "crawlee"}
    )
    found = {"python": platform.python_version()}
    for crawler in crawlers:
        try:
            found[names[crawler]] = version(names[crawler])
        except PackageNotFoundError:
            found[names[crawler]] = "source" if crawler.startswith("skitter") else "?"
    return found


def _header(manifest: Manifest, args: argparse.Namespace) -> list[str]:
    avg_kb = manifest.bytes / manifest.pages / 1024
    versions = ", ".join(f"{k} {v}" for k, v in _versions(args.crawlers).items())
    lines = [
        f"{manifest.pages} pages ({avg_kb:.1f} KB avg, {manifest.links / manifest.pages:.1f} "
        f"links and {manifest.items / manifest.pages:.1f} items per page), concurrency "
        f"{args.concurrency}, median of {args.runs} run(s), {os.cpu_count()} CPUs",
        versions,
    ]
    if manifest.ports:
        hosts = "hosts are" if args.compare_hosts else f"{manifest.hosts} hosts,"
        lines.append(
            f"{hosts} ports of 127.0.0.1, every link absolute; slots: skitter one per "
            "host:port (DOWNLOAD_SLOT_BY=netloc), scrapy one (by hostname), raw none"
        )
    return lines


def _figures_row(label: str, m: dict[str, float]) -> str:
    busy = m["nginx_cpu"] / m["elapsed"] * 100
    return (
        f"{label:<16}{m['pages_per_s']:>10.0f}{m['cpu_per_1k']:>16.3f}"
        f"{m['maxrss_mb']:>13.1f}{m['nginx_cpu']:>13.2f}{busy:>11.0f}%"
    )


def _ratio_row(label: str, r: dict[str, float]) -> str:
    return f"{label:<16}{r['pages_per_s']:>9.2f}x{r['cpu_per_1k']:>15.2f}x{r['maxrss_mb']:>12.2f}x"


_COLUMNS = (
    f"{'pages/s':>10}{'CPU s/1k pages':>16}{'peak RSS MB':>13}{'nginx CPU s':>13}{'nginx busy':>12}"
)


def render(manifest: Manifest, args: argparse.Namespace, medians: dict, rel: dict) -> str:
    lines = [*_header(manifest, args), "", f"{'crawler':<16}{_COLUMNS}"]
    for crawler, m in medians.items():
        lines.append(_figures_row(crawler, m))
    if rel:
        lines.append("")
        for name, r in rel.items():
            lines.append(
                f"{name:<22}{r['pages_per_s']:>9.2f}x{r['cpu_per_1k']:>15.2f}x"
                f"{r['maxrss_mb']:>12.2f}x"
            )
        lines.append("(pages/s: higher is better for skitter; CPU and RSS: lower is better)")
        lines += _verdicts(rel)
    return "\n".join(lines)


def _verdicts(rel: dict[str, dict[str, float]]) -> list[str]:
    """Issue 18's targets, each met or not, for the contenders that ran."""
    lines = []
    for other, (metric, floor) in TARGETS.items():
        r = rel.get(f"skitter/{other}")
        if r is not None:
            verdict = "met" if r[metric] >= floor else "NOT met"
            # On a shared machine the crawlers wait for the CPU unevenly; pages per CPU
            # second is what each would do with a CPU to itself (they are CPU-bound).
            by_cpu = 1 / r["cpu_per_1k"]
            lines.append(
                f"target: skitter/{other} pages/s >= {floor:.1f}x: {r[metric]:.2f}x, {verdict} "
                f"(pages per CPU second: {by_cpu:.2f}x)"
            )
    for name in ("skitter/raw", "skitter-cli/raw-whole"):
        r = rel.get(name)
        if r is None:
            continue
        if name != "skitter/raw":
            floor = TARGETS["raw"][1]
            met = "met" if r["pages_per_s"] >= floor else "NOT met"
            lines.append(
                f"target: {name} pages/s >= {floor:.1f}x: {r['pages_per_s']:.2f}x, {met} "
                f"(pages per CPU second: {1 / r['cpu_per_1k']:.2f}x)"
            )
        verdict = "met" if r["maxrss_mb"] <= RSS_TARGET else "NOT met"
        lines.append(
            f"target: {name} peak RSS <= {RSS_TARGET:.1f}x: {r['maxrss_mb']:.2f}x, {verdict}"
        )
    return lines


def render_hosts(
    manifest: Manifest,
    args: argparse.Namespace,
    medians: dict[tuple[str, int], dict[str, float]],
    rel: dict[str, dict[str, dict[str, float]]],
    results: list[RunResult],
) -> str:
    """The --compare-hosts table: each crawler on each number of hosts, then its ratios
    to the first number of hosts (median ratios, and pages/s ratios run by run)."""
    lines = [*_header(manifest, args), "", f"{'crawler, hosts':<16}{_COLUMNS}{'crawler busy':>14}"]
    for (crawler, hosts), m in medians.items():
        lines.append(f"{_figures_row(f'{crawler}, {hosts}', m)}{m['busy']:>13.0%}")
    base = args.host_counts[0]
    lines += ["", f"{'hosts ratio':<16}{'pages/s':>10}{'CPU s/1k pages':>16}{'peak RSS MB':>13}"]
    for crawler, by_count in rel.items():
        for label, r in by_count.items():
            lines.append(_ratio_row(f"{crawler}, {label}", r))
    lines.append("")
    for crawler, by_count in rel.items():
        for label in by_count:
            hosts = int(label.split("/")[0])
            each = ", ".join(f"{x:.2f}" for x in run_ratios(results, crawler, hosts, base))
            lines.append(f"{crawler} {label} hosts pages/s, run by run: {each}")
    starved = [r for r in results if r.busy < BUSY_FLOOR]
    if starved:
        lines.append(
            f"note: {len(starved)} of {len(results)} runs had the crawler busy below "
            f"{BUSY_FLOOR:.0%} of the time (load average up to "
            f"{max(r.load for r in results):.1f} on {os.cpu_count()} CPUs): it waited, most "
            "likely for other processes, and pages/s moved with them; CPU s/1k pages is "
            "the steadier figure"
        )
    if "skitter" in rel:
        for label, r in rel["skitter"].items():
            verdict = "met" if r["pages_per_s"] >= HOSTS_TARGET else "NOT met"
            lines.append(
                f"target: skitter pages/s {label} hosts >= {HOSTS_TARGET:.2f}x: "
                f"{r['pages_per_s']:.2f}x, {verdict}"
            )
    return "\n".join(lines)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000, help="pages in the site")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight")
    parser.add_argument("--runs", type=int, default=3, help="runs per crawler (median)")
    parser.add_argument("--only", default=",".join(CRAWLERS), help="comma-separated crawlers")
    parser.add_argument("--seed", type=int, default=1, help="site generator seed")
    parser.add_argument(
        "--links",
        default=str(LINKS),
        metavar="N[,M]",
        help="links per page (15; 27 for a link-heavy site), nearly all of them duplicates; "
        "15,27 benchmarks both sites, one after the other",
    )
    parser.add_argument("--site-dir", type=Path, help="generate (or reuse) the site here")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        help="the event loop of skitter and the raw loop (uvloop when installed, as "
        "skitter's ASYNCIO_EVENT_LOOP=auto; Scrapy and crawlee keep their defaults)",
    )
    spread = parser.add_mutually_exclusive_group()
    spread.add_argument(
        "--hosts", type=int, default=1, help="serve the site on N ports (hosts) of 127.0.0.1"
    )
    spread.add_argument(
        "--compare-hosts",
        metavar="N,M",
        help="crawl the site on each number of hosts (e.g. 1,8) and compare them",
    )
    args = parser.parse_args(argv)
    args.crawlers = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(args.crawlers) - set(CRAWLERS)
    if unknown or not args.crawlers:
        parser.error(f"--only takes some of {', '.join(CRAWLERS)}; got {args.only!r}")
    if args.pages < 1 or args.runs < 1 or args.concurrency < 1 or args.hosts < 1:
        parser.error("--pages, --runs, --concurrency and --hosts must be positive")
    try:
        args.link_counts = [int(n) for n in args.links.split(",")]
    except ValueError:
        parser.error(f"--links takes numbers like 27 or 15,27; got {args.links!r}")
    if min(args.link_counts) < 2 or len(set(args.link_counts)) != len(args.link_counts):
        parser.error("--links must be distinct numbers, 2 or more (the next page and another)")
    args.links = args.link_counts[0]
    args.host_counts = [args.hosts]
    if args.compare_hosts is not None:
        try:
            args.host_counts = [int(n) for n in args.compare_hosts.split(",")]
        except ValueError:
            parser.error(f"--compare-hosts takes numbers like 1,8; got {args.compare_hosts!r}")
        counts = args.host_counts
        if len(counts) < 2 or len(set(counts)) != len(counts) or min(counts) < 1:
            parser.error(
                f"--compare-hosts takes two or more distinct positive numbers; got {counts}"
            )
    if max(args.host_counts) > args.pages:
        parser.error("every host needs a page: --pages must be at least the number of hosts")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        find_nginx()
    except NginxMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    for crawler, package in OPTIONAL.items():
        if crawler in args.crawlers and importlib.util.find_spec(package) is None:
            if args.only != ",".join(CRAWLERS):
                print(f"{package} is not installed: pip install -e '.[bench]'", file=sys.stderr)
                return 2
            print(
                f"{package} is not installed (pip install -e '.[bench]'): skipped", file=sys.stderr
            )
            args.crawlers.remove(crawler)
    if args.loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        print("--loop uvloop: uvloop is not installed (pip install -e '.[speed]')", file=sys.stderr)
        return 2
    for i, links in enumerate(args.link_counts):
        site_args = copy.copy(args)
        site_args.links = links
        if args.json and len(args.link_counts) > 1:
            site_args.json = args.json.with_name(
                f"{args.json.stem}-links-{links}{args.json.suffix}"
            )
        if i:
            print()
        status = _bench_site(site_args)
        if status:
            return status
    return 0


def _bench_site(args: argparse.Namespace) -> int:
    """Benchmark the site of ``args.links`` links a page: every crawler, every run."""
    with tempfile.TemporaryDirectory(prefix="skitter-bench-") as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        sites = {hosts: _site(args, tmp, hosts) for hosts in args.host_counts}
        servers = {
            hosts: stack.enter_context(serve_with_nginx(root, tmp / f"nginx-{hosts}", m.ports))
            for hosts, (root, m) in sites.items()
        }
        results: list[RunResult] = []
        for run in range(1, args.runs + 1):
            for hosts, nginx in servers.items():
                manifest = sites[hosts][1]
                label = f" {hosts} host(s)" if len(servers) > 1 else ""
                for crawler in args.crawlers:
                    try:
                        result = run_once(
                            crawler, nginx, manifest, args.concurrency, tmp, args.loop
                        )
                    except BenchmarkFailed as exc:
                        print(f"FAILED: {exc}", file=sys.stderr)
                        return 1
                    results.append(result)
                    print(
                        f"run {run}/{args.runs} {crawler}{label}: "
                        f"{result.pages_per_s:.0f} pages/s, "
                        f"{result.cpu:.2f} s CPU ({result.busy:.0%} busy), "
                        f"{result.maxrss_mb:.0f} MB, load average {result.load:.1f}",
                        file=sys.stderr,
                    )

    manifest = sites[args.host_counts[0]][1]  # the sites differ only in their ports
    by_hosts = summarise(results, args.crawlers, args.host_counts)
    report: dict[str, Any] = {
        "concurrency": args.concurrency,
        "versions": _versions(args.crawlers),
        "cpus": os.cpu_count(),
        "runs": [asdict(r) for r in results],
    }
    if args.compare_hosts is None:
        medians = {crawler: m for (crawler, _), m in by_hosts.items()}
        rel = ratios(medians)
        print(render(manifest, args, medians, rel))
        report |= {"site": asdict(manifest), "median": medians, "ratios": rel}
    else:
        host_rel = host_ratios(by_hosts, args.host_counts)
        print(render_hosts(manifest, args, by_hosts, host_rel, results))
        report |= {
            "sites": {str(hosts): asdict(m) for hosts, (_, m) in sites.items()},
            "median": {
                crawler: {str(h): m for (c, h), m in by_hosts.items() if c == crawler}
                for crawler in args.crawlers
            },
            "host_ratios": host_rel,
            "target": HOSTS_TARGET,
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
