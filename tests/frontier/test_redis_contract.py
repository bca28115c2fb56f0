"""The frontier contract, run on the Redis backend against a real redis-server.

The suite drives time with plain numbers, so these frontiers take the caller's ``now``
as Redis's (``time_source="caller"``: the same scripts, another clock); what Redis's own
clock changes is tested in test_redis_frontier.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from skitter.frontier import Frontier, RedisFrontier
from skitter.frontier.redis import ShardedRedisFrontier
from skitter.testing._redis import redis_server_fixture, redis_url_fixture
from skitter.testing.frontier_contract import FailedTasksContract, FrontierContract

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()


class TestRedisFrontier(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self, redis_url: str) -> AsyncIterator[Frontier]:
        frontier = RedisFrontier(redis_url, project="contract", job="test", time_source="caller")
        yield frontier
        await frontier.close()


class TestRedisFrontierWithBloomFilter(FrontierContract, FailedTasksContract):
    keeps_crawl_times = False

    @pytest.fixture
    async def frontier(self, redis_url: str) -> AsyncIterator[Frontier]:
        frontier = RedisFrontier(
            redis_url,
            project="contract",
            job="bloom",
            dupefilter="bloom",
            bloom_capacity=10_000,
            time_source="caller",
        )
        yield frontier
        await frontier.drop()
        await frontier.close()


class TestShardedRedisFrontier(FrontierContract, FailedTasksContract):
    """The contract with the job split over two shards (``--shards 2``): the suite's
    hosts fall on both."""

    @pytest.fixture
    async def frontier(self, redis_url: str) -> AsyncIterator[Frontier]:
        frontier = ShardedRedisFrontier(
            redis_url, project="contract", job="sharded", shards=2, time_source="caller"
        )
        yield frontier
        await frontier.drop()
        await frontier.close()


class TestShardedRedisFrontierWithBloomFilter(FrontierContract, FailedTasksContract):
    keeps_crawl_times = False

    @pytest.fixture
    async def frontier(self, redis_url: str) -> AsyncIterator[Frontier]:
        frontier = ShardedRedisFrontier(
            redis_url,
            project="contract",
            job="sharded-bloom",
            shards=3,
            dupefilter="bloom",
            bloom_capacity=30_000,
            time_source="caller",
        )
        yield frontier
        await frontier.drop()
        await frontier.close()
