"""CPU cost guard: machine instructions per page of ``skitter crawl -o items.jsonl``.

Timing a crawl in CI says little: the machine is shared and the figure moves by tens of
percent between runs. The number of instructions a fixed crawl executes barely moves,
so it is what this guard compares. It generates a site (``_sitegen``: PAGES pages over
8 hosts, 27 absolute links a page, 26 of them already known), crawls it through the CLI
with a JSON-lines feed (``_guard_crawl.py``: in process, the network in memory, virtual
time) under ``valgrind --tool=callgrind``, and counts the instructions between the
spider's page FIRST and page LAST: the steady state of a crawl, without the imports,
start-up and close that a real crawl of 20,000 pages spreads thin. The spider starts
and stops the count through callgrind's client requests, in a few lines of C compiled
here (``cc`` and valgrind's ``callgrind.h``, which Debian's valgrind package ships).

The figure is compared with the baseline in ``cost_guard.json``; more than THRESHOLD
above it fails (exit 1) with the excess in percent. ``--update`` writes the figure as
the new baseline: do that in the commit that makes the crawl cheaper (or, knowingly,
dearer). The count depends on the Python version and on the versions of the libraries
(lxml, parsel, aiohttp...); the baseline records them, and a run on others says so.

    .venv/bin/python benchmarks/cost_guard.py            # check (about 30 s)
    .venv/bin/python benchmarks/cost_guard.py --update   # record a new baseline
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from _sitegen import generate_site

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "cost_guard.json"
PAGES = 160
FIRST, LAST = 40, 150
HOSTS = 8
LINKS = 27
SEED = 7
THRESHOLD = 0.05
#: The libraries whose versions move the count (recorded beside the baseline).
_PROBE_C = """
#include <valgrind/callgrind.h>
void guard_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void guard_stop(void) { CALLGRIND_DUMP_STATS_AT("steady"); CALLGRIND_STOP_INSTRUMENTATION; }
"""
LIBRARIES = ("aiohttp", "lxml", "parsel", "cssselect", "w3lib", "yarl", "multidict", "orjson")


def _probe(workdir: Path) -> Path:
    """The shared library whose two functions start and stop callgrind's count."""
    source, library = workdir / "probe.c", workdir / "probe.so"
    source.write_text(_PROBE_C)
    done = subprocess.run(
        ["cc", "-shared", "-fPIC", "-O1", "-o", str(library), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"cost guard: cannot build the callgrind probe:\n{done.stderr}")
    return library


def measure(workdir: Path) -> dict[str, Any]:
    """Crawl the site under callgrind; instructions per page between FIRST and LAST."""
    site = workdir / "site"
    ports = [20_001 + k for k in range(HOSTS)]
    manifest = generate_site(site, PAGES, seed=SEED, ports=ports, links=LINKS)
    out = workdir / "out"
    out.mkdir()
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",  # the same set and dict orders, so the same work
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "SKITTER_GUARD_SITE": str(site),
        "SKITTER_GUARD_PROBE": str(_probe(workdir)),
    }
    prefix = workdir / "callgrind.out"
    # The interpreter itself, not a shim or the venv's link: valgrind follows no exec.
    python = os.path.realpath(sys.executable)
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={prefix}",
        python,
        str(HERE / "_guard_crawl.py"),
        str(site),
        str(out),
        str(FIRST),
        str(LAST),
    ]
    # The venv's python finds its packages through sys.prefix; the real binary does not.
    env["PYTHONPATH"] += os.pathsep + os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the guarded crawl failed ({done.returncode}):\n{done.stderr[-3000:]}")
    stats = json.loads((out / "stats.json").read_text())
    pages = stats.get("response_received_count", 0)
    if pages != manifest.pages:
        raise SystemExit(f"the guarded crawl fetched {pages} pages, not {manifest.pages}")
    steady = _totals(Path(f"{prefix}.1"))
    return {
        "instructions_per_page": round(steady / (LAST - FIRST)),
        "pages": manifest.pages,
        "measured_pages": LAST - FIRST,
        "items": sum(1 for _ in (out / "items.jsonl").open()),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }


def _totals(path: Path) -> int:
    """The instruction count of one callgrind dump (its ``totals:`` line)."""
    if not path.exists():
        raise SystemExit(f"callgrind wrote no {path.name}: did the spider reach page {LAST}?")
    for line in path.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"{path} has no totals line")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def compare(figure: dict[str, Any], baseline: dict[str, Any]) -> tuple[bool, str]:
    """Whether the figure is within THRESHOLD of the baseline, and the verdict in words."""
    now, then = figure["instructions_per_page"], baseline["instructions_per_page"]
    change = now / then - 1
    limit = baseline.get("threshold", THRESHOLD)
    words = f"{now:,} instructions per page, baseline {then:,} ({change:+.1%}, limit +{limit:.0%})"
    same = all(figure[k] == baseline.get(k) for k in ("python", "libraries"))
    if not same:
        words += (
            f"\nnote: measured on Python {figure['python']} {figure['libraries']}, the baseline "
            f"on {baseline.get('python')} {baseline.get('libraries')}: counts differ across "
            "versions"
        )
    if change > limit:
        return False, (
            f"cost guard FAILED: the crawl costs {change:.1%} more per page than the baseline "
            f"(more than {limit:.0%}): {words}. Make it cheaper, or if the cost is meant, "
            "record it with `benchmarks/cost_guard.py --update`."
        )
    return True, f"cost guard ok: {words}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="record the figure as baseline")
    parser.add_argument("--keep", type=Path, help="keep the site and callgrind files here")
    args = parser.parse_args()
    for tool in ("valgrind", "cc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"cost guard: {tool} is not installed (apt-get install valgrind gcc)")
    workdir = Path(tempfile.mkdtemp(prefix="skitter-guard-"))
    try:
        figure = measure(workdir)
    finally:
        if args.keep:
            shutil.copytree(workdir, args.keep, dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)
    if not args.update and not BASELINE.exists():
        raise SystemExit(f"cost guard: no baseline {BASELINE.name}; record one with --update")
    if args.update:
        BASELINE.write_text(json.dumps({**figure, "threshold": THRESHOLD}, indent=2) + "\n")
        print(f"cost guard: baseline recorded, {figure['instructions_per_page']:,} per page")
        return 0
    ok, verdict = compare(figure, json.loads(BASELINE.read_text()))
    print(verdict)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
