"""What does durability cost? The SQLite frontier beside the memory frontier, one run.

Replays a crawl's frontier traffic on both backends: N pages, each leased, then ~15
links pushed in one batch (one new page, the rest repeats of queued or finished pages,
as a site's navigation makes them), then acked. Requests are built and fingerprinted
before the clock starts (that is the HTTP layer's cost). Prints pages/s for each
backend, their ratio, the cost of one flush per row, and the codec's encode/decode time.

    PYTHONPATH=src .venv/bin/python benchmarks/frontier_bench.py              # 50,000 pages
    PYTHONPATH=src .venv/bin/python benchmarks/frontier_bench.py --pages 5000 # quick

Target (issue 5): the crawl with --job-dir at >= 0.8 x the in-memory crawl; the
frontier alone is a small part of a crawl's time, so this ratio may be lower.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skitter.frontier import Frontier, MemoryFrontier
from skitter.frontier._sqlite import SqliteFrontier
from skitter.http import Request
from skitter.http._codec import decode_request, encode_request

NOW = 1_700_000_000.0


class Spider:
    def parse(self, response: object) -> None:
        pass


def build(pages: int, links: int, seed: int, spider: Spider) -> list[list[Request]]:
    """For page i, the batch its callback yields: page i+1 (new) and repeats."""
    rng = random.Random(seed)
    batches = []
    for i in range(pages):
        targets = [i + 1] + [rng.randrange(0, i + 2) for _ in range(links - 1)]
        batch = [
            Request(f"http://bench.local/page/{t}.html", spider.parse, meta={"depth": 1})
            for t in targets
        ]
        for request in batch:
            request.fingerprint  # noqa: B018 - computed before the clock starts
        batches.append(batch)
    return batches


async def crawl(frontier: Frontier, batches: list[list[Request]], spider: Spider) -> float:
    start = Request("http://bench.local/page/0.html", spider.parse)
    await frontier.push([start], NOW)
    t0 = time.perf_counter()
    for batch in batches:
        (lease,) = await frontier.lease(1, NOW, 600.0)
        await frontier.push(batch, NOW)
        await frontier.ack(lease, NOW)
    if isinstance(frontier, SqliteFrontier):
        await frontier.flush()  # durable at the end: part of the cost
    return time.perf_counter() - t0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--links", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    spider = Spider()
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for name in ("memory", "sqlite", "sqlite flush/op"):
            batches = build(args.pages, args.links, args.seed, spider)
            if name == "memory":
                frontier: Frontier = MemoryFrontier()
            else:
                path = Path(tmp) / f"{name.replace('/', '-').replace(' ', '-')}.db"
                ops = 1 if name.endswith("op") else 1000
                frontier = SqliteFrontier(path, spider=spider, flush_ops=ops)
            results[name] = await crawl(frontier, batches, spider)
            await frontier.close()
        # Reopening: the cost of resuming a job of this size.
        t0 = time.perf_counter()
        reopened = SqliteFrontier(Path(tmp) / "sqlite.db", spider=spider)
        report = await reopened.load()
        load = time.perf_counter() - t0
        await reopened.close()
    pages = args.pages
    base = results["memory"]
    print(f"{pages:,} pages, {args.links} links pushed per page (one new)")
    for name, seconds in results.items():
        print(
            f"  {name:16} {pages / seconds:>10,.0f} pages/s  "
            f"{seconds / pages * 1e6:6.1f} us/page  ratio {base / seconds:.2f}"
        )
    print(f"  reopen: {report.queued + report.found.succeeded:,} tasks loaded in {load:.2f} s")
    request = Request(
        "http://bench.local/catalogue/page-7.html?sort=price",
        spider.parse,
        meta={"depth": 2, "download_slot": "bench.local"},
    )
    data = encode_request(request, spider)
    n = 100_000
    enc = timeit.timeit(lambda: encode_request(request, spider), number=n) / n * 1e6
    dec = timeit.timeit(lambda: decode_request(data, spider), number=n) / n * 1e6
    print(f"  codec: {len(data)} bytes, encode {enc:.2f} us, decode {dec:.2f} us")


if __name__ == "__main__":
    asyncio.run(main())
