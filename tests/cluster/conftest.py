"""Fixtures for the cluster-wide Redis helpers: a real redis-server per test module,
emptied before each test, and a client that counts its round trips."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Connection, Redis

from skitter.redis import JobKeys
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()


class Counted:
    """A client that counts the writes it sends: one per round trip (a pipeline or a
    MULTI/EXEC block goes out as one write)."""

    def __init__(self, url: str) -> None:
        self.sends = 0
        counted = self

        class CountingConnection(Connection):
            async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                counted.sends += 1
                await super().send_packed_command(command, check_health)

        self.client = Redis.from_url(url, connection_class=CountingConnection)


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client, for a second worker or for looking at keys."""
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def counted(redis_url: str) -> AsyncIterator[Counted]:
    counted = Counted(redis_url)
    yield counted
    await counted.client.aclose()


@pytest.fixture
def keys() -> JobKeys:
    return JobKeys.for_job("shop", "nightly")
