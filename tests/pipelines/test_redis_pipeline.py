"""RedisPipeline against a real redis-server: crawls of a local site put exactly their
items in the list or stream (JSON and msgpack), MAXLEN bounds it, items go in batches
(counted with INFO commandstats), a worker's items are in Redis before its tasks are
acknowledged, and a Redis that goes away mid-crawl fails the crawl with the lost items
counted and the password never shown."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson
import pytest
from aiohttp import web
from redis import Redis
from redis.asyncio import Connection
from redis.asyncio import Redis as AsyncRedis

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import ConfigError, CrawlFailed, StorageError
from skitter.frontier import MemoryFrontier
from skitter.pipelines import ItemPipelineManager, RedisPipeline
from skitter.pipelines._exporters import dumps_json
from skitter.testing import DictStats
from skitter.testing._redis import (
    RedisServer,
    redis_server_fixture,
    redis_url_fixture,
    require_redis_server,
)

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

PIPELINE = {RedisPipeline: 300}
PASSWORD = "s3cret-Items-pw"


def site(pages: int, on_hit: Any = None) -> web.Application:
    """Page n links to 2n+1 and 2n+2 below ``pages``; ``on_hit(n)`` as it serves n."""

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if on_hit is not None:
            on_hit(n)
        links = "".join(f'<a href="/p/{m}">{m}</a>' for m in (2 * n + 1, 2 * n + 2) if m < pages)
        return web.Response(text=f"<html>{links}</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app


class Tree(Spider):
    name = "tree"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response: Response) -> Any:
        n = int(response.url.rsplit("/", 1)[1])
        for k in range(self.settings.get("PER_PAGE", 1)):
            yield {"n": n, "k": k, "tags": {"a"}, "pad": "x" * 50}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


def decode(fmt: str, data: bytes) -> dict[str, Any]:
    return orjson.loads(data) if fmt == "json" else msgspec.msgpack.decode(data)


def stored(client: Redis, key: str, kind: str, fmt: str) -> list[dict[str, Any]]:
    if kind == "list":
        return [decode(fmt, raw) for raw in client.lrange(key, 0, -1)]
    return [decode(fmt, fields[b"item"]) for _id, fields in client.xrange(key)]


def calls(client: Redis, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


@pytest.fixture
def client(redis_url: str) -> Iterator[Redis]:
    with Redis.from_url(redis_url) as redis:
        yield redis


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("kind", ["list", "stream"])
async def test_a_crawl_puts_exactly_its_items_in_redis(
    serve: Any, redis_url: str, client: Redis, kind: str, fmt: str
) -> None:
    base = await serve(site(60))
    settings = {
        "BASE": base,
        "ITEM_PIPELINES": PIPELINE,
        "REDIS_ITEMS_URL": redis_url,
        "REDIS_ITEMS_TYPE": kind,
        "REDIS_ITEMS_FORMAT": fmt,
    }
    stats = await Crawler(Tree, settings).run()
    items = stored(client, "tree:items", kind, fmt)
    assert sorted(item["n"] for item in items) == list(range(60))  # each once
    assert items[0] == {"n": 0, "k": 0, "tags": ["a"], "pad": "x" * 50}
    assert stats["redis_items/sent"] == stats["item_scraped_count"] == 60
    assert "redis_items/lost" not in stats


@pytest.mark.parametrize("kind", ["list", "stream"])
async def test_maxlen_keeps_the_newest_items_and_counts_the_trimmed(
    serve: Any, redis_url: str, client: Redis, kind: str
) -> None:
    client.config_set("stream-node-max-entries", 4)  # XTRIM ~ trims whole nodes
    hits: list[int] = []
    base = await serve(site(60, on_hit=hits.append))
    settings = {
        "BASE": base,
        "ITEM_PIPELINES": PIPELINE,
        "REDIS_ITEMS_URL": redis_url,
        "REDIS_ITEMS_TYPE": kind,
        "REDIS_ITEMS_MAXLEN": 10,
        "REDIS_ITEMS_KEY": "out:%(spider)s",
        "CONCURRENT_REQUESTS": 1,  # one item per batch: the bound holds after each
    }
    try:
        stats = await Crawler(Tree, settings).run()
    finally:
        client.config_set("stream-node-max-entries", 100)
    items = stored(client, "out:tree", kind, "json")
    if kind == "list":
        assert len(items) == 10
    else:
        assert 10 <= len(items) <= 10 + 4
    assert stats["redis_items/sent"] == 60
    assert stats["redis_items/trimmed"] == 60 - len(items)
    assert [item["n"] for item in items] == hits[-len(items) :]  # one page at a time


async def test_items_of_a_crawl_go_in_batches_not_one_round_trip_each(
    serve: Any, redis_url: str, client: Redis
) -> None:
    base = await serve(site(30))
    settings = {
        "BASE": base,
        "PER_PAGE": 20,
        "ITEM_PIPELINES": PIPELINE,
        "REDIS_ITEMS_URL": redis_url,
    }
    before = calls(client, "rpush")
    stats = await Crawler(Tree, settings).run()
    pushes = calls(client, "rpush") - before
    assert client.llen("tree:items") == stats["redis_items/sent"] == 600
    assert 1 <= pushes <= 30  # at most one per page, 20 items or more each


async def test_one_transaction_per_flush_items_in_one_loop_turn(
    redis_url: str, client: Redis
) -> None:
    pipeline = RedisPipeline(redis_url, kind="stream", format="msgpack", flush_items=400)
    spider = Tree()
    await pipeline.open_spider(spider)
    before = calls(client, "exec"), calls(client, "xadd")
    for n in range(1000):  # no await suspends: all in one turn of the loop
        await pipeline.process_item({"n": n}, spider)
    await pipeline.close_spider(spider)
    assert calls(client, "exec") - before[0] == 3  # 400 + 400 + 200
    assert calls(client, "xadd") - before[1] == 1000
    assert [item["n"] for item in stored(client, "tree:items", "stream", "msgpack")] == list(
        range(1000)
    )


class AckWatch(Crawler):
    """A crawler whose frontier is in memory and which flushes before each ack, as a
    worker does; it checks at each ack that the page's item is in Redis already."""

    checked = 0

    def build(self, mode: str = "crawl") -> Any:
        project = super().build(mode)
        project.scheduler.frontier = MemoryFrontier()
        project.flush_feeds_before_ack = True
        complete = project.scheduler.complete
        redis = Redis.from_url(self.settings["REDIS_ITEMS_URL"])

        async def checked_complete(lease: Any) -> Any:
            n = int(lease.request.url.rsplit("/", 1)[1])
            assert n in {orjson.loads(raw)["n"] for raw in redis.lrange("tree:items", 0, -1)}
            self.checked += 1
            return await complete(lease)

        project.scheduler.complete = checked_complete  # type: ignore[method-assign]
        return project


async def test_a_workers_items_are_in_redis_before_its_task_is_acknowledged(
    serve: Any, redis_url: str
) -> None:
    base = await serve(site(40))
    crawler = AckWatch(
        Tree, {"BASE": base, "ITEM_PIPELINES": PIPELINE, "REDIS_ITEMS_URL": redis_url}
    )
    stats = await crawler.run()
    assert crawler.checked == 40
    assert stats["redis_items/sent"] == 40


async def test_a_worker_sends_to_its_own_redis_by_default(
    serve: Any, redis_url: str, client: Redis
) -> None:
    base = await serve(site(20))
    crawler = Crawler(
        Tree,
        {
            "BASE": base,
            "ITEM_PIPELINES": {"skitter.pipelines.RedisPipeline": 300},  # as in the documentation
            "WORKER_IDLE_TIMEOUT": 0.5,
        },
        redis_url=redis_url,
        job="nightly",
    )
    await crawler.run()
    assert sorted(item["n"] for item in stored(client, "tree:items", "list", "json")) == list(
        range(20)
    )


async def test_redis_gone_mid_crawl_fails_the_crawl_and_counts_the_lost(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(binary=require_redis_server(), password=PASSWORD).start()
    try:
        host_port = server.url.removeprefix("redis://")
        url = f"redis://:{PASSWORD}@{host_port}"

        def on_hit(n: int) -> None:
            if n == 30:
                server.kill()

        base = await serve(site(200, on_hit=on_hit))
        settings = {
            "BASE": base,
            "ITEM_PIPELINES": PIPELINE,
            "REDIS_ITEMS_URL": url,
            "REDIS_ITEMS_OUTAGE_TIMEOUT": 2.0,
            "RETRY_ENABLED": False,
        }
        caplog.set_level(logging.DEBUG)
        with pytest.raises(CrawlFailed) as raised:
            await Crawler(Tree, settings).run()
    finally:
        server.close()
    reason = raised.value.reason
    assert re.search(
        r"Redis items 'tree:items' at redis://:\*\*\*@\S+: cannot send items for \d+\.\d s", reason
    )
    assert "trying again for up to 2 s (REDIS_ITEMS_OUTAGE_TIMEOUT)" in caplog.text
    stats = raised.value.stats
    assert stats["finish_reason"] == "failed"
    assert stats["redis_items/lost"] > 0
    assert stats["item_scraped_count"] == stats.get("redis_items/sent", 0)
    assert stats["redis_items/sent"] < 200
    assert PASSWORD not in caplog.text
    assert PASSWORD not in reason


async def test_a_redis_restart_mid_crawl_holds_the_items_and_loses_none(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(binary=require_redis_server(), aof=True).start()
    try:
        loop = asyncio.get_running_loop()

        def on_hit(n: int) -> None:
            if n == 20:
                server.stop()
                loop.call_later(3.0, server.start)

        base = await serve(site(120, on_hit=on_hit))
        settings = {"BASE": base, "ITEM_PIPELINES": PIPELINE, "REDIS_ITEMS_URL": server.url}
        stats = await Crawler(Tree, settings).run()
        with Redis.from_url(server.url) as client:
            items = stored(client, "tree:items", "list", "json")
    finally:
        server.close()
    assert {item["n"] for item in items} == set(range(120))
    assert stats["redis_items/sent"] == len(items)  # at least once: a resent batch counts
    assert "redis_items/lost" not in stats
    assert "cannot be reached: holding the items" in caplog.text
    assert re.search(r"is back after \d+\.\d s", caplog.text)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("REDIS_ITEMS_TYPE", "set", "REDIS_ITEMS_TYPE must be one of 'list', 'stream', not 'set'"),
        ("REDIS_ITEMS_FORMAT", "pickle", "REDIS_ITEMS_FORMAT must be one of 'json', 'msgpack'"),
        ("REDIS_ITEMS_MAXLEN", -1, "REDIS_ITEMS_MAXLEN must be a whole number >= 0"),
        ("REDIS_ITEMS_KEY", "%(name)s:items", "only %\\(spider\\)s is known"),
        ("REDIS_ITEMS_URL", "http://:pw@host/", "must be a redis://"),
        ("REDIS_ITEMS_OUTAGE_TIMEOUT", -1.0, "must be seconds >= 0"),
        ("REDIS_ITEMS_SERIALIZER", "json.dumps", "set REDIS_ITEMS_FORMAT to 'json' or 'msgpack'"),
    ],
)
async def test_a_bad_setting_is_refused_before_the_crawl_starts(
    serve: Any, redis_url: str, name: str, value: Any, message: str
) -> None:
    hits: list[int] = []
    base = await serve(site(5, on_hit=hits.append))
    settings = {"BASE": base, "ITEM_PIPELINES": PIPELINE, "REDIS_ITEMS_URL": redis_url}
    with pytest.raises(ConfigError, match=message) as raised:
        await Crawler(Tree, {**settings, name: value}).run()
    assert "pw" not in str(raised.value)
    assert hits == []


async def test_no_redis_for_the_items_is_refused(serve: Any) -> None:
    base = await serve(site(5))
    with pytest.raises(ConfigError, match="RedisPipeline needs a Redis"):
        await Crawler(Tree, {"BASE": base, "ITEM_PIPELINES": PIPELINE}).run()


async def test_a_key_of_another_type_is_refused_at_open(redis_url: str, client: Redis) -> None:
    client.set("tree:items", "not a list")
    pipeline = RedisPipeline(redis_url, kind="list", stats=DictStats())
    with pytest.raises(ConfigError, match="is a string, not a list"):
        await pipeline.open_spider(Tree())


async def test_a_redis_out_of_reach_at_open_is_a_storage_error() -> None:
    with RedisServer(binary=require_redis_server()) as server:
        url = server.url
    pipeline = RedisPipeline(url)
    with pytest.raises(StorageError, match="cannot start"):
        await pipeline.open_spider(Tree())


@dataclasses.dataclass
class Product:
    name: str
    price: decimal.Decimal
    seen: datetime.date


async def test_items_of_any_kind_are_encoded_as_the_feeds_encode_them(
    redis_url: str, client: Redis
) -> None:
    stats = DictStats()
    pipeline = RedisPipeline(redis_url, format="msgpack", stats=stats)
    manager = ItemPipelineManager([pipeline], stats=stats)
    spider = Tree()
    await manager.open_spider(spider)
    item = Product("lamp", decimal.Decimal("9.90"), datetime.date(2026, 12, 1))
    assert await manager.process_item(item, spider) is item
    # msgpack has no integers past 64 bits: not an item left out while the crawl goes on
    # (issue 27), but the crawl's failure; the items of tasks still finishing are sent
    with pytest.raises(StorageError, match="cannot encode a dict item as msgpack"):
        await manager.process_item({"n": 2**70}, spider)
    assert await manager.process_item({"n": 1}, spider) == {"n": 1}
    await manager.close_spider(spider)
    assert stored(client, "tree:items", "list", "msgpack") == [
        {"name": "lamp", "price": "9.90", "seen": "2026-12-01"},
        {"n": 1},
    ]
    assert "item_error_count" not in stats
    assert stats["redis_items/sent"] == stats["item_scraped_count"] == 2
    big = {"n": 2**70, "s": "\ud800"}  # what orjson refuses: the standard library's JSON
    assert dumps_json(big) == json.dumps(big).encode()
    assert dumps_json({"a": 1}, newline=True) == b'{"a":1}\n'


async def test_a_nan_is_refused_not_sent_as_null(redis_url: str, client: Redis) -> None:
    """orjson writes NaN as null: a reader could not tell it from None (issue 27)."""
    pipeline = RedisPipeline(redis_url, stats=DictStats())
    spider = Tree()
    await pipeline.open_spider(spider)
    with pytest.raises(StorageError, match="as json: ValueError: JSON has no NaN"):
        await pipeline.process_item({"price": float("nan")}, spider)
    await pipeline.process_item({"price": None}, spider)
    await pipeline.close_spider(spider)
    assert stored(client, "tree:items", "list", "json") == [{"price": None}]


async def test_a_close_cancelled_while_redis_is_away_counts_what_it_held_as_lost() -> None:
    with RedisServer(binary=require_redis_server()) as server:
        stats = DictStats()
        pipeline = RedisPipeline(server.url, stats=stats)
        spider = Tree()
        await pipeline.open_spider(spider)
        server.kill()
        for n in range(5):
            await pipeline.process_item({"n": n}, spider)
        closing = asyncio.ensure_future(pipeline.close_spider(spider))
        await asyncio.sleep(0.1)  # inside the retries
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
    assert pipeline.lost_items == stats["redis_items/lost"] == 5
    assert "redis_items/sent" not in stats


async def test_a_wrong_password_is_refused_at_open_without_showing_it() -> None:
    with RedisServer(binary=require_redis_server(), password=PASSWORD) as server:
        url = f"redis://:not-{PASSWORD}@{server.url.removeprefix('redis://')}"
        pipeline = RedisPipeline(url)
        with pytest.raises(ConfigError, match="refused the credentials") as raised:
            await pipeline.open_spider(Tree())
    assert "redis://:***@127.0.0.1:" in str(raised.value)
    assert PASSWORD not in str(raised.value)
    assert PASSWORD not in repr(pipeline)


async def test_a_flush_cancelled_with_its_batch_sent_stores_each_item_once(
    redis_url: str, client: Redis
) -> None:
    """An item's flush cancelled as the crawl ends, its RPUSH already with Redis: the
    close's flush must not send that batch again (the items were stored twice)."""
    sent = asyncio.Event()

    class Announcing(Connection):
        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            await super().send_packed_command(command, check_health)
            chunks = [command] if isinstance(command, bytes | str) else command
            if any(b"RPUSH" in bytes(chunk) for chunk in chunks if not isinstance(chunk, str)):
                sent.set()

    pipeline = RedisPipeline(redis_url, flush_items=3)
    spider = Tree()
    await pipeline.open_spider(spider)
    await pipeline._close_client()
    pipeline._client = AsyncRedis.from_url(redis_url, connection_class=Announcing)
    await pipeline.process_item({"n": 0}, spider)
    await pipeline.process_item({"n": 1}, spider)
    flushing = asyncio.ensure_future(pipeline.process_item({"n": 2}, spider))  # a full batch
    await sent.wait()  # the RPUSH is with Redis: it stores the batch, whatever we do now
    flushing.cancel()
    await asyncio.gather(flushing, return_exceptions=True)
    await pipeline.process_item({"n": 3}, spider)
    await pipeline.close_spider(spider)
    got = [item["n"] for item in stored(client, "tree:items", "list", "json")]
    assert got == [0, 1, 2, 3]
    assert pipeline.sent == 4
