"""skitter with a job directory (the SQLite frontier): issue 5's contender.

The same spider and settings as ``_crawl_skitter``; the only difference is ``job_dir``,
so the ratio to the plain skitter run is the cost of crawling crash-safely.
"""

from __future__ import annotations

import tempfile

import _crawl_skitter as plain
from _report import Meter, child_args, run_on


def main() -> None:
    args = child_args()
    with tempfile.TemporaryDirectory(prefix="skitter-bench-job-") as job_dir:
        meter = Meter()
        stats = run_on(args.loop, plain.crawl(args.start_url, args.concurrency, job_dir=job_dir))
        meter.report(
            plain.COUNTS["pages"],
            plain.COUNTS["items"],
            hosts=dict(plain.HOSTS),
            slots=sorted(plain.SLOTS_SEEN),
            stats=stats,
        )


if __name__ == "__main__":
    main()
