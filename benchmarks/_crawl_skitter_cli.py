"""skitter as a user runs it: ``skitter crawl spider.py -o items.jsonl``, measured whole.

The other children measure themselves from the start of the crawl; this one runs the
CLI in a process of its own (``python -m skitter crawl _cli_spider.py -o ...``, the
default settings but the concurrency, robots.txt off and ERROR logging) and measures
that process whole, start-up and imports included, as ``time`` would. Pages come from
the crawl's ``--stats-json``, items and pages per host from the JSON-lines feed (every
page of the site has items). The loop is the CLI's own choice (ASYNCIO_EVENT_LOOP=auto:
uvloop when installed); ``--loop asyncio`` sets ASYNCIO_EVENT_LOOP=asyncio.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from _report import MARKER, child_args, host_of, run_whole

HERE = Path(__file__).resolve().parent


def main() -> None:
    args = child_args()
    with tempfile.TemporaryDirectory(prefix="skitter-cli-") as tmp:
        feed, stats = Path(tmp) / "items.jsonl", Path(tmp) / "stats.json"
        command = [
            sys.executable, "-m", "skitter", "crawl", str(HERE / "_cli_spider.py"),
            "-a", f"url={args.start_url}", "-o", str(feed), "--stats-json", str(stats),
            "--no-progress",
            "-s", f"CONCURRENT_REQUESTS={args.concurrency}",
            "-s", f"CONCURRENT_REQUESTS_PER_DOMAIN={args.concurrency}",
            "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=ERROR",
        ]  # fmt: skip
        if args.loop == "asyncio":
            command += ["-s", "ASYNCIO_EVENT_LOOP=asyncio"]
        status, _, figures = run_whole(command)
        if status != 0:
            raise SystemExit(f"skitter crawl exited with {status}")
        pages = json.loads(stats.read_text()).get("response_received_count", 0)
        urls = [json.loads(line)["url"] for line in feed.open()]
    hosts = Counter(host_of(url) for url in set(urls))
    result = {"pages": pages, "items": len(urls), **figures, "hosts": dict(hosts)}
    print(MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
