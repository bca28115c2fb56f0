"""The skitter contender: the spider a user would write, run with Crawler(...).run().

Pages, items and pages per host are counted by the spider itself, so the check does not
depend on stat names; the crawl's own stats are reported alongside for the record.
Download slots are by ``host:port`` (``DOWNLOAD_SLOT_BY=netloc``), so each port of a
multi-host site is a slot of its own; every 200 pages the spider notes the live slots,
and the parent checks that there was one per port, or the run would not measure slots.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from _report import Meter, child_args, host_of, run_on

from skitter.crawler import Crawler
from skitter.http import Request, Response
from skitter.spider import Spider

SLOT_SAMPLE_EVERY = 200
COUNTS = {"pages": 0, "items": 0}
HOSTS: Counter[str] = Counter()
SLOTS_SEEN: set[str] = set()
CRAWLER: list[Crawler] = []


class BenchSpider(Spider):
    name = "bench"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        COUNTS["pages"] += 1
        HOSTS[host_of(response.url)] += 1
        if COUNTS["pages"] % SLOT_SAMPLE_EVERY == 1:
            SLOTS_SEEN.update(slot["slot"] for slot in CRAWLER[0].control.slot_stats())
        for item in response.css("div.item"):
            COUNTS["items"] += 1
            yield {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        yield from response.follow_all(css="a::attr(href)")


async def crawl(
    start_url: str,
    concurrency: int,
    job_dir: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_SLOT_BY": "netloc",
        "LOG_LEVEL": "WARNING",
        "STATS_DUMP": False,
        **(extra or {}),
    }
    crawler = Crawler(BenchSpider, settings=settings, job_dir=job_dir, start_url=start_url)
    CRAWLER.append(crawler)
    return await crawler.run()


def main(extra: dict[str, Any] | None = None, require: str | None = None) -> None:
    """Crawl the site and report; ``extra`` settings for the variants (a transport, a
    session pool), ``require`` a stat the variant's crawl must have counted (else it did
    not measure what it claims)."""
    args = child_args()
    meter = Meter()
    stats = run_on(args.loop, crawl(args.start_url, args.concurrency, extra=extra))
    if require is not None and not stats.get(require):
        raise SystemExit(f"the crawl counted no {require}: {stats}")
    meter.report(
        COUNTS["pages"], COUNTS["items"], hosts=dict(HOSTS), slots=sorted(SLOTS_SEEN), stats=stats
    )


if __name__ == "__main__":
    main()
