"""A place of its own on each of the machine's servers, per test: a database, a queue,
a stream, a key prefix, named at random and removed after."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from skitter.testing._sinks import (
    fresh_name,
    mysql_database,
    postgres_database,
    require_service,
)


@pytest.fixture
async def pg_uri() -> AsyncIterator[str]:
    """A database of its own on the machine's PostgreSQL."""
    async with postgres_database(require_service("postgresql")) as uri:
        yield uri


@pytest.fixture
async def mysql_uri() -> AsyncIterator[str]:
    async with mysql_database(require_service("mysql")) as uri:
        yield uri


@pytest.fixture
async def amqp_queue() -> AsyncIterator[tuple[str, str]]:
    """A queue of its own on the machine's RabbitMQ: (the broker's URI, the queue)."""
    import aio_pika

    uri = f"amqp://guest:guest@{require_service('amqp')}/"
    name = fresh_name()
    yield uri, name
    connection = await aio_pika.connect(uri)
    async with connection:
        channel = await connection.channel()
        await channel.queue_delete(name)


@pytest.fixture
async def nats_stream() -> AsyncIterator[tuple[str, str]]:
    """A JetStream stream name of its own (the test creates it): (the URI, the name)."""
    import nats
    from nats.js.errors import NotFoundError

    uri = f"nats://{require_service('nats')}"
    name = fresh_name("SK")
    yield uri, name
    nc = await nats.connect(uri)
    try:
        with contextlib.suppress(NotFoundError):
            await nc.jetstream().delete_stream(name)
    finally:
        await nc.close()


@pytest.fixture
async def redis_prefix() -> AsyncIterator[tuple[str, str]]:
    """A key prefix of its own on the machine's Redis, whose keys are deleted after."""
    from redis.asyncio import Redis

    uri = f"redis://{require_service('redis')}/0"
    prefix = fresh_name()
    yield uri, prefix
    client = Redis.from_url(uri)
    try:
        keys = [key async for key in client.scan_iter(f"{prefix}*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
