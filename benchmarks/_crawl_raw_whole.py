"""The raw loop measured whole, as ``_crawl_skitter_cli.py`` measures skitter's CLI:
``_crawl_raw.py`` in a process of its own, its CPU and peak RSS from ``wait4``
(interpreter start-up and imports included), its pages, items and hosts as it counts
them. The ratio of the two is the one a user with ``time`` would see."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _report import MARKER, child_args, run_whole

HERE = Path(__file__).resolve().parent


def main() -> None:
    args = child_args()
    command = [sys.executable, str(HERE / "_crawl_raw.py"), args.start_url]
    command += ["--concurrency", str(args.concurrency), "--loop", args.loop]
    status, out, figures = run_whole(command)
    lines = [line for line in out.splitlines() if line.startswith(MARKER)]
    if status != 0 or not lines:
        raise SystemExit(f"the raw loop exited with {status}")
    result = json.loads(lines[-1][len(MARKER) :]) | figures
    print(MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
