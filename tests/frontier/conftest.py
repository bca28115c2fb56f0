"""The Redis frontier tests share two fixtures (each module starts its own redis-server
and names it ``redis_url``): ``make`` and ``client``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.frontier import RedisFrontier


@pytest.fixture
async def make(redis_url: str) -> AsyncIterator[Callable[..., RedisFrontier]]:
    """``make(project=..., job=..., url=..., ...)``: a frontier with its own client (on
    the module's redis-server unless ``url``), project "p", job "j", times given by the
    caller; closed after the test."""
    made: list[RedisFrontier] = []

    def factory(**kwargs: Any) -> RedisFrontier:
        kwargs.setdefault("project", "p")
        kwargs.setdefault("job", "j")
        kwargs.setdefault("time_source", "caller")
        frontier = RedisFrontier(kwargs.pop("url", redis_url), **kwargs)
        made.append(frontier)
        return frontier

    yield factory
    for frontier in made:
        await frontier.close()


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client of the module's redis-server, for looking at or planting keys."""
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()
