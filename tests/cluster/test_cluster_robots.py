"""robots.txt fetched once per origin for the whole cluster (issue 14), cached in Redis
with its expiry (``RedisRobotsCache``, injected into RobotsTxtMiddleware by the
crawler). A real redis-server; at the end, real ``skitter worker`` processes against a
real HTTP server that counts its robots.txt requests."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from test_workers import SPIDER, Site, items, run_workers

from skitter.cluster._robots import RedisRobotsCache
from skitter.frontier._redis import JobKeys
from skitter.testing._redis import RedisServer, require_redis_server

ORIGIN = "http://example.com"


async def test_the_first_asker_claims_it_the_others_wait_then_read_it(
    client: Redis, keys: JobKeys
) -> None:
    a, b = RedisRobotsCache(client, keys), RedisRobotsCache(client, keys)
    assert await a.claim(ORIGIN) == ("mine", None)
    assert await b.claim(ORIGIN) == ("busy", None)
    await a.put(ORIGIN, "User-agent: *\nDisallow: /x\n", 60)
    assert await b.claim(ORIGIN) == ("cached", "User-agent: *\nDisallow: /x\n")
    assert await a.claim("http://other.example") == ("mine", None), "one per origin"


async def test_no_rules_are_cached_too_and_everything_expires(client: Redis, keys: JobKeys) -> None:
    cache = RedisRobotsCache(client, keys)
    await cache.claim(ORIGIN)
    await cache.put(ORIGIN, None, 0.2)
    assert await cache.claim(ORIGIN) == ("cached", None)
    await asyncio.sleep(0.3)
    assert await cache.claim(ORIGIN) == ("mine", None), "expired: fetched again"


async def test_a_dead_workers_claim_lapses(client: Redis, keys: JobKeys) -> None:
    dead, alive = RedisRobotsCache(client, keys, lease=0.2), RedisRobotsCache(client, keys)
    assert await dead.claim(ORIGIN) == ("mine", None)  # and never puts
    assert await alive.claim(ORIGIN) == ("busy", None)
    await asyncio.sleep(0.3)
    assert await alive.claim(ORIGIN) == ("mine", None)


async def test_redis_out_of_reach_means_fetch_it_yourself(keys: JobKeys) -> None:
    client = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5)
    try:
        cache = RedisRobotsCache(client, keys)
        assert await cache.claim(ORIGIN) == ("mine", None)
        await cache.put(ORIGIN, "x", 60)  # no error
    finally:
        await client.aclose()


# -- end to end ------------------------------------------------------------------------------
class RobotsSite(Site):
    def __init__(self) -> None:
        super().__init__(latency=0.0)
        self.robots_hits = 0
        self.app.router.add_get("/robots.txt", self.robots)

    async def robots(self, request: web.Request) -> web.Response:
        self.robots_hits += 1
        await asyncio.sleep(0.3)  # long enough for both workers to ask meanwhile
        return web.Response(text="User-agent: *\nDisallow: /p/2\nCrawl-delay: 0.25\n")


@pytest.fixture
def live_redis() -> Any:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


async def test_two_workers_fetch_robots_txt_once_and_share_its_crawl_delay(
    serve: Any, tmp_path: Path, live_redis: RedisServer
) -> None:
    spider_file = tmp_path / "tree.py"
    spider_file.write_text(SPIDER)
    site = RobotsSite()
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    settings = ("ROBOTSTXT_OBEY=true", "RANDOMIZE_DOWNLOAD_DELAY=false", "CLOSESPIDER_TIMEOUT=8")
    started = time.monotonic()
    await run_workers(spider_file, live_redis.url, outs, base, *settings)
    assert site.robots_hits == 1, "once for the cluster"
    assert 2 not in {n for _, n in site.served}, "both workers obey it"
    assert 2 not in items(outs)
    times = sorted(t for t, _ in site.served if t > started)
    window = [t for t in times if times[0] + 1 <= t < times[0] + 6]
    # 1 per 0.25 s for both: a delay a loaded machine may exceed, never undercut
    assert 4 * 5 * 0.6 <= len(window) <= 4 * 5 * 1.1, len(window)
