"""skitter answering from a warm HTTP cache: issue 16's contender.

The same spider and settings as ``_crawl_skitter`` with HTTPCACHE_ENABLED: one crawl
fills the cache (not measured), the measured one is served from it, so the ratio to the
plain skitter run is what the cache saves (or costs) against the network.
"""

from __future__ import annotations

import tempfile
from typing import Any

import _crawl_skitter as plain
from _report import Meter, child_args, run_on


def main() -> None:
    args = child_args()
    with tempfile.TemporaryDirectory(prefix="skitter-bench-cache-") as cache:
        extra: dict[str, Any] = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": cache}
        run_on(args.loop, plain.crawl(args.start_url, args.concurrency, extra=extra))
        plain.COUNTS.update(pages=0, items=0)
        plain.HOSTS.clear()
        plain.SLOTS_SEEN.clear()
        plain.CRAWLER.clear()
        meter = Meter()
        stats = run_on(args.loop, plain.crawl(args.start_url, args.concurrency, extra=extra))
        if stats.get("httpcache/hit") != plain.COUNTS["pages"]:
            raise SystemExit(f"the warm run was not served from the cache: {stats}")
        meter.report(
            plain.COUNTS["pages"],
            plain.COUNTS["items"],
            hosts=dict(plain.HOSTS),
            slots=sorted(plain.SLOTS_SEEN),
            stats=stats,
        )


if __name__ == "__main__":
    main()
