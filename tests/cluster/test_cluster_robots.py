"""robots.txt fetched once per origin for the whole cluster (issue 14), cached in Redis
with its expiry (``RedisRobotsCache``, injected into RobotsTxtMiddleware by the
crawler). A real redis-server; at the end, two workers in this process on virtual time
against a real HTTP server that counts its robots.txt requests."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from test_cluster_rate import virtual_worker

from skitter.cluster._robots import RedisRobotsCache
from skitter.redis import JobKeys
from skitter.testing import VirtualTimeLoop

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
    await asyncio.sleep(0.3)  # a real redis-server: the 0.2 s expiry runs on its clock
    assert await cache.claim(ORIGIN) == ("mine", None), "expired: fetched again"


async def test_a_dead_workers_claim_lapses(client: Redis, keys: JobKeys) -> None:
    dead, alive = RedisRobotsCache(client, keys, lease=0.2), RedisRobotsCache(client, keys)
    assert await dead.claim(ORIGIN) == ("mine", None)  # and never puts
    assert await alive.claim(ORIGIN) == ("busy", None)
    await asyncio.sleep(0.3)  # a real redis-server: the 0.2 s lease lapses on its clock
    assert await alive.claim(ORIGIN) == ("mine", None)


async def test_redis_out_of_reach_means_fetch_it_yourself(keys: JobKeys) -> None:
    # No retries of the client's own (redis-py backs off for seconds): each call is refused
    # at once, and what skitter makes of a refusal is the subject.
    client = Redis(host="127.0.0.1", port=1, retry=Retry(NoBackoff(), 0))
    try:
        cache = RedisRobotsCache(client, keys)
        assert await cache.claim(ORIGIN) == ("mine", None)
        await cache.put(ORIGIN, "x", 60)  # no error
    finally:
        await client.aclose()


# -- end to end ------------------------------------------------------------------------------
class RobotsSite:
    """robots.txt (slow to answer, so that both workers ask for it meanwhile) with a
    Crawl-delay, and pages that stamp each arrival with the virtual seconds since the
    test began and the worker that sent it."""

    def __init__(self) -> None:
        self.robots_hits = 0
        self.arrivals: list[tuple[float, int, str]] = []
        self.app = web.Application()
        self.app.router.add_get("/robots.txt", self.robots)
        self.app.router.add_get("/p/{n}", self.page)

    async def robots(self, request: web.Request) -> web.Response:
        self.robots_hits += 1
        await asyncio.sleep(0.3)  # virtual
        return web.Response(text="User-agent: *\nDisallow: /p/2\nCrawl-delay: 0.25\n")

    async def page(self, request: web.Request) -> web.Response:
        now = round(asyncio.get_running_loop().time() - VirtualTimeLoop.START, 6)
        self.arrivals.append((now, int(request.match_info["n"]), request.headers["X-Worker"]))
        return web.Response(text="<html>ok</html>", content_type="text/html")


async def crawl_with_two_workers(serve: Any, redis_url: str) -> RobotsSite:
    site = RobotsSite()
    base = await serve(site.app)
    workers = [
        virtual_worker(
            redis_url,
            base,
            ROBOTSTXT_OBEY=True,
            RANDOMIZE_DOWNLOAD_DELAY=False,
            CLOSESPIDER_TIMEOUT=3.9,
            DEFAULT_REQUEST_HEADERS={"X-Worker": name},
        )
        for name in "ab"
    ]
    stats = await asyncio.gather(*(worker.run() for worker in workers))
    assert all(s["response_received_count"] > 0 for s in stats)  # both crawled
    return site


@pytest.mark.virtual_time
async def test_two_workers_fetch_robots_txt_once_and_obey_its_crawl_delay(
    serve: Any, redis_url: str
) -> None:
    site = await crawl_with_two_workers(serve, redis_url)
    assert site.robots_hits == 1, "once for the cluster"
    assert 2 not in {n for _, n, _ in site.arrivals}, "both workers obey it"
    for name in "ab":
        starts = [t for t, _, worker in site.arrivals if worker == name]
        gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
        assert min(gaps) >= 0.25 - 1e-9, (name, starts)


@pytest.mark.virtual_time
async def test_the_crawl_delay_spaces_the_starts_of_the_whole_cluster(
    serve: Any, redis_url: str
) -> None:
    """A worker's first download of a host takes the slot's permit before it has read
    robots.txt: it used to carry no delay, so that download started at the instant
    another worker's did."""
    site = await crawl_with_two_workers(serve, redis_url)
    starts = sorted(t for t, _, _ in site.arrivals)
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    assert min(gaps) >= 0.25 - 1e-9, starts
