"""1 process against ``--processes N`` on the bench kit's site, interleaved; prints the
ratio of pages/s and the CPU per page of the coordinator and of the workers.

Usage (the kit's nginx serving its site, see its README; the start URL is read from
the site's ``site.json``)::

    python benchmarks/procs_ratio.py /tmp/procsbench [RUNS] [N] [--coordinator-only]

``--coordinator-only`` runs only the ``--processes N`` crawls and prints the
coordinator's CPU and calls per page: figures from the coordinator process's own
counters (``time.process_time()``, frames served), which a busy machine moves far less
than pages/s.

Both runs use DOWNLOAD_SLOT_BY=netloc (the kit's eight "hosts" are eight ports of
127.0.0.1: by host they would be one slot, so one busy process) and the kit's spider,
concurrency 64, robots.txt off, a JSON-lines feed.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def run(kit: Path, processes: int) -> dict[str, float]:
    start_url = json.loads((kit / "site" / "site.json").read_text())["start_url"]
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "stats.json"
        cmd = [
            str(Path(sys.executable).with_name("skitter")),
            "crawl",
            str(kit / "crawlers" / "skitter_bench_spider.py"),
            "-a",
            f"url={start_url}",
            "-o",
            f"{tmp}/items.jsonl",
            *("-s", "CONCURRENT_REQUESTS=64", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=64"),
            *("-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=ERROR"),
            *("-s", "DOWNLOAD_SLOT_BY=netloc", "--no-progress", "--stats-json", str(stats)),
            *(["--processes", str(processes)] if processes > 1 else []),
        ]
        subprocess.run(cmd, check=True, capture_output=True)
        s = json.loads(stats.read_text())
        items = Path(f"{tmp}/items.jsonl").read_text().count("\n")
    pages = s["response_received_count"]
    out = {"pages_per_s": pages / s["elapsed_time_seconds"], "pages": pages, "items": items}
    if processes > 1:
        out["coordinator_ms_per_page"] = 1000 * s["multiproc/coordinator_cpu_seconds"] / pages
        out["workers_ms_per_page"] = 1000 * s["multiproc/worker_cpu_seconds"] / pages
        out["calls_per_page"] = s["multiproc/coordinator_calls"] / pages
        if "multiproc/coordinator_frames" in s:  # frames the coordinator wrote
            out["frames_per_page"] = s["multiproc/coordinator_frames"] / pages
        out["decoded_share"] = s["multiproc/requests_decoded"] / s["multiproc/requests_pushed"]
    return out


def main() -> None:
    argv = [arg for arg in sys.argv[1:] if arg != "--coordinator-only"]
    coordinator_only = len(argv) < len(sys.argv) - 1
    kit = Path(argv[0])
    runs = int(argv[1]) if len(argv) > 1 else 3
    n = int(argv[2]) if len(argv) > 2 else 2
    one, many = [], []
    for _ in range(runs):
        if not coordinator_only:
            one.append(run(kit, 1))
            print(f"1: {one[-1]}", flush=True)
        many.append(run(kit, n))
        print(f"{n}: {many[-1]}", flush=True)
    if one:
        a = statistics.median(r["pages_per_s"] for r in one)
        b = statistics.median(r["pages_per_s"] for r in many)
        print(f"median pages/s: 1 process {a:.0f}, {n} processes {b:.0f}: {b / a:.2f}x")
    for key in ("coordinator_ms_per_page", "workers_ms_per_page", "calls_per_page"):
        print(f"{key}: {statistics.median(r[key] for r in many):.3f}")
    if all("frames_per_page" in r for r in many):
        print(f"frames_per_page: {statistics.median(r['frames_per_page'] for r in many):.3f}")


if __name__ == "__main__":
    main()
