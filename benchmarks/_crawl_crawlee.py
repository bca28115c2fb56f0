"""The crawlee-python contender: a ParselCrawler, as its documentation writes one.

The default handler counts pages, items and pages per host and enqueues every link
(``enqueue_links``, crawlee's ``follow_all``: same-hostname links, fragments dropped by
its unique keys). Concurrency is fixed at ``--concurrency`` (min, desired and max), the
request queue lives in memory (``MemoryStorageClient``: nothing written to ./storage,
as skitter's memory frontier), no robots.txt; everything else is crawlee's default
(its HTTP client, retries, autoscaling that may lower concurrency when CPU is short).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from _report import Meter, child_args, host_of
from crawlee import ConcurrencySettings
from crawlee.crawlers import ParselCrawler, ParselCrawlingContext
from crawlee.storage_clients import MemoryStorageClient

COUNTS = {"pages": 0, "items": 0}
HOSTS: Counter[str] = Counter()


async def crawl(start_url: str, concurrency: int) -> dict[str, object]:
    crawler = ParselCrawler(
        concurrency_settings=ConcurrencySettings(
            min_concurrency=concurrency,
            desired_concurrency=concurrency,
            max_concurrency=concurrency,
        ),
        storage_client=MemoryStorageClient(),
        configure_logging=False,
    )

    @crawler.router.default_handler
    async def handler(context: ParselCrawlingContext) -> None:
        COUNTS["pages"] += 1
        HOSTS[host_of(context.request.url)] += 1
        for item in context.selector.css("div.item"):
            COUNTS["items"] += 1
            _ = {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        await context.enqueue_links(selector="a")

    stats = await crawler.run([start_url])
    return {"failed": stats.requests_failed, "finished": stats.requests_finished}


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    args = child_args()
    meter = Meter()
    stats = asyncio.run(crawl(args.start_url, args.concurrency))
    meter.report(COUNTS["pages"], COUNTS["items"], hosts=dict(HOSTS), stats=stats)


if __name__ == "__main__":
    main()
