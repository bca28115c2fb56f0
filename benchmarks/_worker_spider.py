"""The spider the Redis benchmark runs through the ``skitter`` command, in-memory and as
workers: ``_crawl_skitter.BenchSpider`` (the same extraction and link following), plus
a probe for the parent.

``redis_bench.py`` copies nothing: it points ``skitter crawl`` / ``skitter worker`` at
this file. Each process writes its probe to the JSON file named by the environment
variable ``SKITTER_BENCH_PROBE`` when it exits: pages and items it handled, when the
spider was loaded and when its last page was parsed (``time.monotonic()``, one clock
for every process on the machine), and its CPU time at load and at exit. The last
page is the end of the crawl: a worker then waits ``WORKER_IDLE_TIMEOUT`` for the
cluster to stay idle, which is not crawling.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _crawl_skitter as bench

from skitter.http import Request, Response

__all__ = ["WorkerBenchSpider"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


PROBE: dict[str, Any] = {"loaded": time.monotonic(), "cpu_loaded": _cpu(), "last_page": None}


class WorkerBenchSpider(bench.BenchSpider):
    name = "bench"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> WorkerBenchSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        bench.CRAWLER.append(crawler)  # BenchSpider samples the crawler's slots
        return spider  # type: ignore[return-value]

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        yield from super().parse(response)
        PROBE["last_page"] = time.monotonic()


@atexit.register
def _write_probe() -> None:
    path = os.environ.get("SKITTER_BENCH_PROBE")
    if not path:
        return
    probe = PROBE | bench.COUNTS | {"hosts": dict(bench.HOSTS), "cpu_exit": _cpu()}
    Path(path).write_text(json.dumps(probe))
