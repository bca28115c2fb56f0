"""Each sink end to end against its real server: a crawl of the generated site writes
exactly the expected rows or messages, and the same crawl run again writes no second
copy (upserts, JetStream's and the Redis sink's deduplication), except on RabbitMQ,
which is at least once and says so."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skitter.crawler import Crawler

from ._site import PAGES, Page, Tree, tree_site

pytestmark = pytest.mark.slow


async def crawl(serve: Any, sinks: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A crawl of the site (one per test, so a second crawl fetches the same URLs)."""
    if serve not in _sites:
        _sites[serve] = await serve(tree_site())
    settings = {"BASE": _sites[serve], "SINKS": sinks, "CONCURRENT_REQUESTS": 8}
    return await Crawler(Tree, settings, **kwargs).run()


_sites: dict[Any, str] = {}


async def pg_rows(uri: str, query: str) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri) as conn:
        cur = await conn.execute(query.encode())
        return list(await cur.fetchall())


async def test_postgresql_gets_every_item_once_in_typed_columns(serve: Any, pg_uri: str) -> None:
    sinks = {
        f"{pg_uri}?table=pages": {"item_classes": [Page], "create": True},
        f"{pg_uri}?table=everything": {"create": True},
    }
    stats = await crawl(serve, sinks)
    assert stats["sink/postgresql:pages/written"] == PAGES
    assert stats["sink/postgresql:everything/written"] == 2 * PAGES
    pages = await pg_rows(pg_uri, "SELECT n, url, title, tags, data FROM pages ORDER BY n")
    assert [row[0] for row in pages] == list(range(PAGES))
    assert pages[3][1].endswith("/p/3") and pages[3][2] == "page 3"
    assert pages[3][3] == ["a", "3"] and pages[3][4] is None  # jsonb, no stray fields
    types = dict(
        await pg_rows(
            pg_uri,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'pages'",
        )
    )
    assert types == {"n": "bigint", "url": "text", "title": "text", "tags": "jsonb",
                     "data": "jsonb"}  # fmt: skip
    everything = await pg_rows(pg_uri, "SELECT item_id, data FROM everything")
    assert len(everything) == len({row[0] for row in everything}) == 2 * PAGES
    notes = [data for item_id, data in everything if item_id.startswith("tree/")]
    assert sorted(note["page"] for note in notes) == list(range(PAGES))

    again = await crawl(serve, sinks)  # every task runs again: the upsert absorbs it
    assert again["sink/postgresql:everything/written"] == 2 * PAGES
    assert await pg_rows(pg_uri, "SELECT count(*) FROM everything") == [(2 * PAGES,)]
    assert await pg_rows(pg_uri, "SELECT count(*) FROM pages") == [(PAGES,)]


async def test_mysql_gets_every_item_once(serve: Any, mysql_uri: str) -> None:
    import aiomysql

    sinks = {f"{mysql_uri}?table=pages": {"item_classes": [Page], "create": True}}
    await crawl(serve, sinks)
    await crawl(serve, sinks)
    address, _, database = mysql_uri.removeprefix("mysql://root@").partition("/")
    host, _, port = address.partition(":")
    conn = await aiomysql.connect(host=host, port=int(port), user="root", db=database)
    try:
        async with conn.cursor() as cur:
            await cur.execute("SELECT n, title, tags FROM pages ORDER BY n")
            rows = await cur.fetchall()
    finally:
        conn.close()
    assert [row[0] for row in rows] == list(range(PAGES))
    assert rows[5][1] == "page 5" and json.loads(rows[5][2]) == ["a", "5"]


async def test_sqlite_keeps_its_file_in_the_job_directory(serve: Any, tmp_path: Path) -> None:
    job = tmp_path / "job"
    stats = await crawl(serve, {"sqlite:?table=items": {}}, job_dir=job)
    assert stats["sink/sqlite:items/written"] == 2 * PAGES
    with sqlite3.connect(job / "items.sqlite3") as db:
        rows = db.execute("SELECT item_id, data FROM items").fetchall()
    assert len(rows) == len({item_id for item_id, _data in rows}) == 2 * PAGES
    pages = [json.loads(data)["n"] for item_id, data in rows if not item_id.startswith("tree/")]
    assert sorted(pages) == list(range(PAGES))


async def test_rabbitmq_gets_every_item_with_its_id(
    serve: Any, amqp_queue: tuple[str, str]
) -> None:
    import aio_pika

    uri, queue = amqp_queue
    stats = await crawl(serve, {f"{uri}?queue={queue}": {}})
    assert stats["sink/amqp:" + queue + "/written"] == 2 * PAGES
    connection = await aio_pika.connect(uri)
    async with connection:
        channel = await connection.channel()
        declared = await channel.declare_queue(queue, durable=True, passive=True)
        ids, bodies = [], []
        while (message := await declared.get(no_ack=True, fail=False)) is not None:
            ids.append(message.message_id)
            assert message.headers["x-skitter-item-id"] == message.message_id
            bodies.append(json.loads(message.body))
    assert len(ids) == len(set(ids)) == 2 * PAGES
    assert sorted(b["n"] for b in bodies if "n" in b) == list(range(PAGES))


async def test_jetstream_stores_every_item_once_by_message_id(
    serve: Any, nats_stream: tuple[str, str]
) -> None:
    import nats

    uri, stream = nats_stream
    sinks = {f"{uri}?subject={stream}.items&stream={stream}": {"create": True}}
    await crawl(serve, sinks)
    again = await crawl(serve, sinks)
    assert again[f"sink/nats:{stream}.items/duplicates"] == 2 * PAGES
    nc = await nats.connect(uri)
    try:
        info = await nc.jetstream().stream_info(stream)
    finally:
        await nc.close()
    assert info.state.messages == 2 * PAGES


async def test_a_redis_stream_gets_every_item_once(
    serve: Any, redis_prefix: tuple[str, str]
) -> None:
    from redis.asyncio import Redis

    uri, prefix = redis_prefix
    sinks = {f"{uri}?stream={prefix}:items": {}}
    await crawl(serve, sinks)
    again = await crawl(serve, sinks)
    assert again[f"sink/redis:{prefix}:items/duplicates"] == 2 * PAGES
    client = Redis.from_url(uri)
    try:
        entries = await client.xrange(f"{prefix}:items")
    finally:
        await client.aclose()
    ids = [fields[b"id"] for _entry, fields in entries]
    assert len(ids) == len(set(ids)) == 2 * PAGES
