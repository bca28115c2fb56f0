"""The conditional recrawl's validators in a distributed crawl: kept in the job's Redis
(``RedisValidators``), sent on a recrawl by whichever worker leases it, cleared with the
job. A real redis-server and a real HTTP server."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from skitter import Crawler, Request, Response, Spider
from skitter.cluster._validators import RedisValidators
from skitter.redis import JobKeys


async def test_put_get_clear(client: Redis, keys: JobKeys) -> None:
    store = RedisValidators(client, keys)
    assert await store.get("t1") is None
    await store.put("t1", '"e"', None)
    await store.put("t2", None, "Tue, 01 Dec 2026 10:00:00 GMT")
    other = RedisValidators(client, keys)  # another worker's
    assert await other.get("t1") == ('"e"', None)
    assert await other.get("t2") == (None, "Tue, 01 Dec 2026 10:00:00 GMT")
    await client.hset(keys.validators, "t3", b"\xffnot json")
    assert await other.get("t3") is None  # not what skitter writes: nothing known
    await store.clear()
    assert await client.exists(keys.validators) == 0


async def test_redis_out_of_reach_means_crawl_whole(keys: JobKeys) -> None:
    # No retries of the client's own (redis-py backs off for seconds): each call is refused
    # at once, and what skitter makes of a refusal is the subject.
    client = Redis(host="127.0.0.1", port=1, retry=Retry(NoBackoff(), 0))
    try:
        store = RedisValidators(client, keys)
        assert await store.get("t1") is None
        await store.put("t1", '"e"', None)  # no error
    finally:
        await client.aclose()


@pytest.mark.parametrize("persist", [True, False])
async def test_a_workers_recrawl_sends_the_jobs_validators(
    serve: Any, redis_url: str, client: Redis, persist: bool
) -> None:
    hits: Counter[str] = Counter()
    conditional: list[str | None] = []
    keys = JobKeys.for_job("again", "v")

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if request.path == "/hub":
            # Asked for while the page's own task may not be settled yet (its ack goes
            # out after its requests): the hub answers once it is, so that the page the
            # hub links to is a recrawl, not a duplicate of a task still in flight.
            page = Request(f"{base}/page").taskid
            async with asyncio.timeout(30):  # a safety net: the ack is on its way
                while not await client.hexists(keys.done, page):  # noqa: ASYNC110
                    await asyncio.sleep(0.01)  # polls a real process (redis-server)
            return web.Response(text="hub")
        asked = request.headers.get("If-None-Match")
        conditional.append(asked)
        if asked == '"one"':
            return web.Response(status=304, headers={"ETag": '"one"'})
        return web.Response(text="page", headers={"ETag": '"one"'})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    base = await serve(app)
    seen: list[int] = []

    class Again(Spider):
        name = "again"

        async def start(self) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)

        def parse_page(self, response: Response) -> Any:
            seen.append(response.status)
            yield Request(f"{base}/hub", self.parse_hub)

        def parse_hub(self, response: Response) -> Any:
            yield Request(f"{base}/page", self.parse_page, age=0)  # age passed: recrawled

    settings = {"WORKER_IDLE_TIMEOUT": 0.5, "LOG_LEVEL": "WARNING", "REDIS_PERSIST": persist}
    stats = await Crawler(Again, settings, redis_url=redis_url, job="v").run()
    assert conditional == [None, '"one"'] and seen == [200]
    assert stats["recrawl/unchanged"] == 1
    if persist:  # kept in Redis, where every worker of the job reads them
        assert await client.hlen(keys.validators) == 1
    else:  # the last worker out cleared the job: a new run sees every page whole
        assert await client.exists(keys.validators) == 0
