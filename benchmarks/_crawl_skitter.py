"""The skitter contender: the spider a user would write, run with Crawler(...).run().

Pages and items are counted by the spider itself, so the check does not depend on stat
names; the crawl's own stats are reported alongside for the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from _report import Meter, child_args

from skitter.crawler import Crawler
from skitter.http import Request, Response
from skitter.spider import Spider

COUNTS = {"pages": 0, "items": 0}


class BenchSpider(Spider):
    name = "bench"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        COUNTS["pages"] += 1
        for item in response.css("div.item"):
            COUNTS["items"] += 1
            yield {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        yield from response.follow_all(css="a::attr(href)")


async def crawl(start_url: str, concurrency: int) -> dict[str, Any]:
    settings = {
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "LOG_LEVEL": "WARNING",
        "STATS_DUMP": False,
    }
    return await Crawler(BenchSpider, settings=settings, start_url=start_url).run()


def main() -> None:
    args = child_args()
    meter = Meter()
    stats = asyncio.run(crawl(args.start_url, args.concurrency))
    meter.report(COUNTS["pages"], COUNTS["items"], stats=stats)


if __name__ == "__main__":
    main()
