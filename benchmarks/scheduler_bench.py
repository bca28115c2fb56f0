"""How fast and how small is the memory frontier's core, beside plain ``heapq``?

Pushes N requests with random priorities (10 % of them repeat an earlier URL and must
merge) into ``MemoryTaskQueue``, then leases and acks every task one at a time, as a
crawl does. The Requests and their fingerprints are built before the clock starts: that
is the HTTP layer's cost, not the queue's. In the same run it measures a floor: Python's
``heapq`` with ``(-priority, seq, obj)`` tuples, pushing all and popping all. It prints
ops/s for both and their ratio, and the bytes each queued and each finished task costs
(tracemalloc, Request objects excluded: the benchmark holds them), in a second pass so
that tracing does not slow the timed one. The queue is ``MemoryFrontier``'s, which packs
the requests of ready tasks into bytes (issue 18): leasing one makes an equal Request
again, a cost the timed run includes.

    python benchmarks/scheduler_bench.py            # 1,000,000 tasks
    python benchmarks/scheduler_bench.py --n 50000  # a quick run

Targets: ops/s >= 0.5 x the heapq floor; <= 400 bytes per queued task. (MB here are
10**6 bytes.)

It also reports what a crawl's frontier weighs per URL with the Request objects counted
(issue 18): each queued request as a crawl holds it (a link followed from a page: the
URL, its fingerprint, ``meta["depth"]`` from DepthMiddleware and the ``Referer`` header
from RefererMiddleware, as the default spider middlewares leave them), and each seen URL
once its task has finished (what the dupe check keeps), with the memory an N-URL
frontier needs in each state. Target: a 1,000,000-URL frontier in <= 300 MB.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skitter.frontier import MemoryTaskQueue
from skitter.http import Request

LONG = "https://shop.example.com/catalogue/category/books/fiction_{i}/page-{p}.html?sort=price"

NOW = 1_700_000_000.0


def build_requests(n: int, seed: int) -> list[Request]:
    """``n`` requests, 10 % of them repeating an earlier URL (a fresh Request object,
    as a spider would yield it), each with its fingerprint already computed."""
    rng = random.Random(seed)
    requests: list[Request] = []
    for i in range(n):
        if i and rng.random() < 0.10:
            url = requests[rng.randrange(i)].url
        else:
            url = f"https://example.com/item/{i}?page={i % 97}"
        request = Request(url, priority=rng.randrange(10))
        request.fingerprint  # noqa: B018 - computed up front, outside the timing
        requests.append(request)
    return requests


def run_queue(requests: list[Request]) -> tuple[float, int, int]:
    """Seconds to push everything, then lease and ack every task; (seconds, ops, tasks)."""
    queue = MemoryTaskQueue()
    push, lease, ack = queue.push, queue.lease, queue.ack
    start = time.perf_counter()
    for request in requests:
        push(request, NOW)
    tasks = 0
    while True:
        leased = lease(1, NOW, 600.0)
        if not leased:
            break
        ack(leased[0], NOW)
        tasks += 1
    elapsed = time.perf_counter() - start
    return elapsed, len(requests) + 2 * tasks, tasks


def run_heapq(requests: list[Request]) -> tuple[float, int]:
    """The floor: heapq with (-priority, seq, request) tuples, push all and pop all."""
    heap: list[tuple[int, int, Request]] = []
    seq = itertools.count()
    start = time.perf_counter()
    for request in requests:
        heapq.heappush(heap, (-request.priority, next(seq), request))
    while heap:
        heapq.heappop(heap)
    elapsed = time.perf_counter() - start
    return elapsed, 2 * len(requests)


def measure_memory(requests: list[Request]) -> tuple[float, float, int, int]:
    """Bytes per queued task after pushing all, and per finished task after acking all."""
    gc.collect()
    tracemalloc.start()
    queue = MemoryTaskQueue()
    base = tracemalloc.get_traced_memory()[0]
    for request in requests:
        queue.push(request, NOW)
    queued = len(queue)
    queued_bytes = tracemalloc.get_traced_memory()[0] - base
    while leased := queue.lease(256, NOW, 600.0):
        for one in leased:
            queue.ack(one, NOW)
        del leased, one
    queue.reclaim_expired(NOW + 601)  # drop the dead lease entries, as time would
    gc.collect()
    finished_bytes = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return queued_bytes / queued, finished_bytes / queued, queued, queued_bytes


def short_url(i: int) -> str:
    return f"https://example.com/p/{i // 1000:03d}/{i:07d}.html"  # 39 characters


def long_url(i: int) -> str:
    return LONG.format(i=i, p=i % 50)  # about 90 characters


def crawl_request(url: str, referer: str) -> Request:
    """A followed link as the default spider middlewares leave it before it is queued."""
    request = Request(url)
    request.meta["depth"] = 3
    request.setdefault_referer(referer)  # as RefererMiddleware does
    request.fingerprint  # noqa: B018 - computed by the scheduler before the push
    return request


def measure_frontier(n: int, url: Callable[[int], str]) -> tuple[float, float]:
    """Bytes per queued request (Request included) and per seen URL (finished): links of
    ``url(i)``, 27 a page, the page's URL their Referer."""
    gc.collect()
    tracemalloc.start()
    queue = MemoryTaskQueue()
    referers = [url(n + i) for i in range(n // 27 + 1)]
    base = tracemalloc.get_traced_memory()[0]  # the pages' URLs are not the frontier's
    for i in range(n):
        queue.push(crawl_request(url(i), referers[i // 27]), NOW)
    queued = tracemalloc.get_traced_memory()[0] - base
    while leased := queue.lease(256, NOW, 600.0):
        for one in leased:
            queue.ack(one, NOW)
        del leased, one
    queue.reclaim_expired(NOW + 601)
    gc.collect()
    seen = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return queued / n, seen / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="requests to push")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    args = parser.parse_args()

    print(f"building {args.n:,} requests ...", flush=True)
    requests = build_requests(args.n, args.seed)

    queue_best = floor_best = float("inf")
    for _ in range(args.repeat):
        gc.collect()
        seconds, ops, tasks = run_queue(requests)
        queue_best = min(queue_best, seconds)
        gc.collect()
        floor_seconds, floor_ops = run_heapq(requests)
        floor_best = min(floor_best, floor_seconds)
    queue_rate = ops / queue_best
    floor_rate = floor_ops / floor_best
    per_queued, per_finished, queued, _ = measure_memory(requests)

    print(f"python {sys.version.split()[0]}, {args.n:,} pushes, {tasks:,} tasks after merging")
    print(f"MemoryTaskQueue  push+lease+ack: {queue_best:7.3f} s  {queue_rate:12,.0f} ops/s")
    print(f"heapq floor      push+pop:       {floor_best:7.3f} s  {floor_rate:12,.0f} ops/s")
    ratio = queue_rate / floor_rate
    print(f"ratio (queue / floor ops/s): {ratio:.2f}  (target >= 0.50)")
    print(f"bytes per queued task:   {per_queued:6.0f}  (target <= 400; {queued:,} queued)")
    print(f"bytes per finished task: {per_finished:6.0f}")
    mb = args.n / 1e6
    worst = 0.0
    for name, url in (("39-character URLs", short_url), ("90-character URLs", long_url)):
        per_request, per_seen = measure_frontier(args.n, url)
        worst = max(worst, per_request, per_seen)
        print(f"{name}:")
        print(
            f"  bytes per queued request, Request included: {per_request:6.0f}  "
            f"({per_request * mb:,.0f} MB for {args.n:,} queued)"
        )
        print(
            f"  bytes per seen URL (finished):              {per_seen:6.0f}  "
            f"({per_seen * mb:,.0f} MB for {args.n:,} seen)"
        )
    verdict = "met" if worst <= 300 else "NOT met"  # bytes per URL: MB per million URLs
    print(f"target: a 1,000,000-URL frontier (all queued, or all seen) <= 300 MB: {verdict}")


if __name__ == "__main__":
    main()
