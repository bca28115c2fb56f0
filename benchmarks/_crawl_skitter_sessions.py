"""skitter with a session pool: issue 17's contender.

The same spider and settings as ``_crawl_skitter`` with SESSION_POOL_SIZE=8 (the site
never blocks), so the ratio to the plain skitter run is what sessions cost per request:
one more middleware, a session taken and stamped, a cookie jar per session, and every
response checked for a block.
"""

from __future__ import annotations

import asyncio

import _crawl_skitter as plain
from _report import Meter, child_args


def main() -> None:
    args = child_args()
    meter = Meter()
    stats = asyncio.run(
        plain.crawl(args.start_url, args.concurrency, extra={"SESSION_POOL_SIZE": 8})
    )
    if not stats.get("sessions/created"):
        raise SystemExit(f"the crawl made no sessions: {stats}")
    meter.report(
        plain.COUNTS["pages"],
        plain.COUNTS["items"],
        hosts=dict(plain.HOSTS),
        slots=sorted(plain.SLOTS_SEEN),
        stats=stats,
    )


if __name__ == "__main__":
    main()
