"""Crawl benchmark: skitter against a hand-written aiohttp loop and against Scrapy.

Generates a synthetic static site (see ``_sitegen.py``), serves it with nginx on
127.0.0.1, and crawls it with each crawler in its own subprocess, ``--runs`` times,
interleaved. Every run must fetch every page and extract every item, or the benchmark
fails. Prints, per crawler, the median pages/s, CPU seconds per 1,000 pages, peak RSS
and nginx's CPU time, then skitter's ratios to the others, all measured in this run::

    PYTHONPATH=src .venv/bin/python benchmarks/crawl_bench.py              # 20,000 pages
    PYTHONPATH=src .venv/bin/python benchmarks/crawl_bench.py --pages 2000 --runs 1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _nginx import NginxMissing, NginxServer, find_nginx, serve_with_nginx
from _report import MARKER
from _sitegen import Manifest, generate_site, load_manifest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CRAWLERS = ("skitter", "raw", "scrapy")
METRICS = ("pages_per_s", "cpu_per_1k", "maxrss_mb", "nginx_cpu")


class BenchmarkFailed(RuntimeError):
    """A crawler crashed, or missed pages or items."""


@dataclass(frozen=True)
class RunResult:
    crawler: str
    pages: int
    items: int
    elapsed: float
    cpu: float
    maxrss_mb: float
    nginx_cpu: float

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.elapsed

    @property
    def cpu_per_1k(self) -> float:
        return self.cpu / self.pages * 1000

    def figures(self) -> dict[str, float]:
        return {m: getattr(self, m) for m in METRICS} | {"elapsed": self.elapsed, "cpu": self.cpu}


def _command(crawler: str, start_url: str, concurrency: int) -> list[str]:
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
    script = HERE / f"_crawl_{crawler}.py"
    return [sys.executable, str(script), start_url, "--concurrency", str(concurrency)]


def run_once(
    crawler: str, nginx: NginxServer, manifest: Manifest, concurrency: int, cwd: Path
) -> RunResult:
    """Crawl the site once in a fresh process; raise BenchmarkFailed unless complete."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    start_url = nginx.base_url + manifest.start_path
    timeout = 120 + manifest.pages / 20
    cpu_before = nginx.cpu_seconds()
    try:
        done = subprocess.run(
            _command(crawler, start_url, concurrency),
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
    return RunResult(
        crawler,
        data["pages"],
        data["items"],
        data["elapsed"],
        data["cpu"],
        data["maxrss_mb"],
        nginx_cpu,
    )


def _extra(data: dict[str, Any]) -> str:
    skip = {"pages", "items", "elapsed", "cpu", "maxrss_mb"}
    return ", ".join(f"{k}={v}" for k, v in data.items() if k not in skip) or "no details"


def _site(args: argparse.Namespace, tmp: Path) -> tuple[Path, Manifest]:
    root = args.site_dir or tmp / "site"
    manifest = load_manifest(root)
    if manifest and (manifest.pages, manifest.seed) == (args.pages, args.seed):
        print(f"reusing the site in {root}", file=sys.stderr)
        return root, manifest
    started = time.perf_counter()
    manifest = generate_site(root, args.pages, args.seed)
    took = time.perf_counter() - started
    print(f"generated {manifest.pages} pages in {root} ({took:.1f} s)", file=sys.stderr)
    return root, manifest


def summarise(results: list[RunResult], crawlers: list[str]) -> dict[str, dict[str, float]]:
    """The median of each figure over the runs, per crawler."""
    medians = {}
    for crawler in crawlers:
        runs = [r.figures() for r in results if r.crawler == crawler]
        medians[crawler] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return medians


def ratios(medians: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """skitter's figures divided by each other crawler's."""
    if "skitter" not in medians:
        return {}
    mine = medians["skitter"]
    return {
        f"skitter/{other}": {m: mine[m] / theirs[m] if theirs[m] else float("nan") for m in METRICS}
        for other, theirs in medians.items()
        if other != "skitter"
    }


def _versions(crawlers: list[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    names = {"skitter": "skitter", "raw": "aiohttp", "scrapy": "scrapy"}
    found = {"python": platform.python_version()}
    for crawler in crawlers:
        try:
            found[names[crawler]] = version(names[crawler])
        except PackageNotFoundError:
            found[names[crawler]] = "source" if crawler == "skitter" else "?"
    return found


def render(manifest: Manifest, args: argparse.Namespace, medians: dict, rel: dict) -> str:
    avg_kb = manifest.bytes / manifest.pages / 1024
    versions = ", ".join(f"{k} {v}" for k, v in _versions(args.crawlers).items())
    lines = [
        f"{manifest.pages} pages ({avg_kb:.1f} KB avg, {manifest.links / manifest.pages:.1f} "
        f"links and {manifest.items / manifest.pages:.1f} items per page), concurrency "
        f"{args.concurrency}, median of {args.runs} run(s), {os.cpu_count()} CPUs",
        versions,
        "",
        f"{'crawler':<16}{'pages/s':>10}{'CPU s/1k pages':>16}{'peak RSS MB':>13}"
        f"{'nginx CPU s':>13}{'nginx busy':>12}",
    ]
    for crawler, m in medians.items():
        busy = m["nginx_cpu"] / m["elapsed"] * 100
        lines.append(
            f"{crawler:<16}{m['pages_per_s']:>10.0f}{m['cpu_per_1k']:>16.3f}"
            f"{m['maxrss_mb']:>13.1f}{m['nginx_cpu']:>13.2f}{busy:>11.0f}%"
        )
    if rel:
        lines.append("")
        for name, r in rel.items():
            lines.append(
                f"{name:<16}{r['pages_per_s']:>9.2f}x{r['cpu_per_1k']:>15.2f}x"
                f"{r['maxrss_mb']:>12.2f}x"
            )
        lines.append("(pages/s: higher is better for skitter; CPU and RSS: lower is better)")
    return "\n".join(lines)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000, help="pages in the site")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight")
    parser.add_argument("--runs", type=int, default=3, help="runs per crawler (median)")
    parser.add_argument("--only", default=",".join(CRAWLERS), help="comma-separated crawlers")
    parser.add_argument("--seed", type=int, default=1, help="site generator seed")
    parser.add_argument("--site-dir", type=Path, help="generate (or reuse) the site here")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    args.crawlers = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(args.crawlers) - set(CRAWLERS)
    if unknown or not args.crawlers:
        parser.error(f"--only takes some of {', '.join(CRAWLERS)}; got {args.only!r}")
    if args.pages < 1 or args.runs < 1 or args.concurrency < 1:
        parser.error("--pages, --runs and --concurrency must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        find_nginx()
    except NginxMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    if "scrapy" in args.crawlers and importlib.util.find_spec("scrapy") is None:
        if args.only != ",".join(CRAWLERS):
            print("scrapy is not installed: pip install -e '.[bench]'", file=sys.stderr)
            return 2
        print("scrapy is not installed (pip install -e '.[bench]'): skipped", file=sys.stderr)
        args.crawlers.remove("scrapy")

    with tempfile.TemporaryDirectory(prefix="skitter-bench-") as tmp_name:
        tmp = Path(tmp_name)
        root, manifest = _site(args, tmp)
        results: list[RunResult] = []
        with serve_with_nginx(root, tmp / "nginx") as nginx:
            for run in range(1, args.runs + 1):
                for crawler in args.crawlers:
                    try:
                        result = run_once(crawler, nginx, manifest, args.concurrency, tmp)
                    except BenchmarkFailed as exc:
                        print(f"FAILED: {exc}", file=sys.stderr)
                        return 1
                    results.append(result)
                    print(
                        f"run {run}/{args.runs} {crawler}: {result.pages_per_s:.0f} pages/s, "
                        f"{result.cpu:.2f} s CPU, {result.maxrss_mb:.0f} MB",
                        file=sys.stderr,
                    )

    medians = summarise(results, args.crawlers)
    rel = ratios(medians)
    print(render(manifest, args, medians, rel))
    if args.json:
        report = {
            "site": asdict(manifest),
            "concurrency": args.concurrency,
            "versions": _versions(args.crawlers),
            "cpus": os.cpu_count(),
            "runs": [asdict(r) for r in results],
            "median": medians,
            "ratios": rel,
        }
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
