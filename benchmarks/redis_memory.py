"""Redis memory per queued task and per done URL, exact and Bloom dupe filter (issue 14).

Starts its own redis-server on a free 127.0.0.1 port, pushes ``--tasks`` requests shaped
like a site crawl's (``http://127.0.0.1:PORT/p/NNN/NNNNN.html``, a callback, a Referer-free
default request) into a ``RedisFrontier``, reads ``used_memory`` from INFO, then leases and
acks them all and reads it again. Prints bytes per queued task, bytes per done URL, and
the Bloom filter's bytes per URL at its capacity, so that a cluster can be sized::

    PYTHONPATH=src .venv/bin/python benchmarks/redis_memory.py --tasks 200000
"""

from __future__ import annotations

import argparse
import asyncio
import time

from redis.asyncio import Redis

from skitter.frontier import RedisFrontier
from skitter.http import Request
from skitter.testing._redis import RedisServer, require_redis_server

BATCH = 1_000


class _Spider:
    name = "bench"

    def parse(self, response: object) -> None: ...


async def _used_memory(client: Redis) -> int:
    info = await client.info("memory")
    return int(info["used_memory"])


async def _measure(url: str, tasks: int, dupefilter: str) -> tuple[float, float, float]:
    spider = _Spider()
    frontier = RedisFrontier(
        url,
        project="bench",
        job=dupefilter,
        spider=spider,
        dupefilter=dupefilter,  # type: ignore[arg-type]
        bloom_capacity=max(tasks, 1_000_000),
    )
    client = Redis.from_url(url)
    try:
        await frontier.open_job()
        base = await _used_memory(client)
        now = time.time()
        for start in range(0, tasks, BATCH):
            batch = [
                Request(f"http://127.0.0.1:8080/p/{n // 1000:03d}/{n:05d}.html", spider.parse)
                for n in range(start, min(tasks, start + BATCH))
            ]
            await frontier.push(batch, now)
        queued = await _used_memory(client)
        while True:
            leases = await frontier.lease(BATCH, now, 600)
            if not leases:
                break
            await asyncio.gather(*(frontier.ack(lease, now) for lease in leases))
        done = await _used_memory(client)
        bloom = 0.0
        if frontier.bloom is not None:
            shape = frontier.bloom.shape
            bloom = shape.memory_bytes / shape.capacity
        return (queued - base) / tasks, (done - base) / tasks, bloom
    finally:
        await client.aclose()
        await frontier.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200_000, help="requests to queue")
    args = parser.parse_args()
    with RedisServer(binary=require_redis_server()) as server:
        print(
            f"{args.tasks:,} tasks, URLs of {len('http://127.0.0.1:8080/p/000/00000.html')} chars"
        )
        print(f"{'dupe filter':<12}{'B/queued task':>15}{'B/done URL':>12}{'Bloom B/URL':>13}")
        for dupefilter in ("exact", "bloom"):
            queued, done, bloom = await _measure(server.url, args.tasks, dupefilter)
            bloom_text = f"{bloom:.2f}" if bloom else "-"
            print(f"{dupefilter:<12}{queued:>15.0f}{done:>12.0f}{bloom_text:>13}")
        print(
            "Bloom: done URLs cost only the bitmap, sized for REDIS_BLOOM_CAPACITY at "
            "REDIS_BLOOM_ERROR_RATE (0.1 % here) whatever the count; the 'B/done URL' "
            "column divides that bitmap by the tasks pushed."
        )


if __name__ == "__main__":
    asyncio.run(main())
