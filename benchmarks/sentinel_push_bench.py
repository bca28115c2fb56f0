"""What a push's wait for a replica costs: pushes per second on a single Redis (no
``WAIT`` sent) and behind Sentinel with ``REDIS_SENTINEL_WAIT_REPLICAS`` 1 and 0.

Starts private servers (a ``redis-server``; a master, a replica and a sentinel), then
pushes ``--batches`` batches of ``--links`` new links each, one batch at a time (as a
worker pushes a page's links), and prints the median of ``--runs`` runs. ``--single``
runs the single Redis only, with any version of skitter on ``PYTHONPATH``: compare a
commit before the wait with this one::

    PYTHONPATH=src .venv/bin/python benchmarks/sentinel_push_bench.py --batches 2000
    PYTHONPATH=/tmp/old/src .venv/bin/python benchmarks/sentinel_push_bench.py --single
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time

from skitter.frontier.redis import RedisFrontier
from skitter.http import Request
from skitter.redis import RedisTarget
from skitter.testing._redis import RedisServer
from skitter.testing._redis_deploy import SentinelSet

_jobs = itertools.count()


async def _pushes_per_second(target: RedisTarget, batches: int, links: int) -> float:
    job = f"bench{next(_jobs)}"
    frontier = RedisFrontier(target, project="bench", job=job)
    await frontier.open_job()
    try:
        started = time.perf_counter()
        for b in range(batches):
            urls = [f"http://h{b % 50}.example/{b}/{i}" for i in range(links)]
            await frontier.push([Request(u) for u in urls], 0.0)
        return batches / (time.perf_counter() - started)
    finally:
        await frontier.drop()
        await frontier.close()


async def _main(args: argparse.Namespace) -> None:
    with RedisServer() as single, SentinelSet("bench") as sentinel:
        targets = {"single Redis": RedisTarget(f"redis://127.0.0.1:{single.port}/0")}
        if not args.single:  # the Sentinel rows need this version's settings
            targets["Sentinel, wait 1"] = RedisTarget(sentinel.url, sentinel_master="bench")
            targets["Sentinel, wait 0"] = RedisTarget(
                sentinel.url, sentinel_master="bench", sentinel_wait_replicas=0
            )
        rows: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(args.runs):  # interleaved: one machine's noise hits every row
            for name, target in targets.items():
                rows[name].append(await _pushes_per_second(target, args.batches, args.links))
    for name, values in rows.items():
        print(f"{name:18} {statistics.median(values):9.0f} pushes/s ({args.links} links each)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=2000, help="pushes per run")
    parser.add_argument("--links", type=int, default=20, help="links per push")
    parser.add_argument("--runs", type=int, default=5, help="runs (median)")
    parser.add_argument(
        "--single", action="store_true", help="only the single Redis (runs on older code too)"
    )
    asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
