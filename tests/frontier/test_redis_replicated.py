"""A push waits for replicas behind Sentinel only: a single Redis gets no WAIT."""

from __future__ import annotations

import pytest

from skitter.frontier.redis import RedisFrontier
from skitter.http import Request
from skitter.redis import ReplicaWait
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()  # a private server: no other client's WAIT counted
redis_url = redis_url_fixture()


async def _waits(frontier: RedisFrontier) -> int:
    stats = await frontier.client.info("commandstats")
    return int(stats.get("cmdstat_wait", {}).get("calls", 0))


async def test_a_push_on_a_single_redis_sends_no_wait(redis_url: str) -> None:
    frontier = RedisFrontier(redis_url, project="replicated", job="single")
    await frontier.open_job()
    try:
        before = await _waits(frontier)
        await frontier.push([Request(f"http://a.example/{i}") for i in range(3)], 0.0)
        assert await _waits(frontier) == before
    finally:
        await frontier.drop()
        await frontier.close()


@pytest.mark.parametrize(("replicas", "timeout"), [(-1, 1.0), (True, 1.0), (1, 0.0)])
def test_a_wait_for_no_sane_number_of_replicas_is_refused(replicas: int, timeout: float) -> None:
    with pytest.raises(ValueError, match=r"replicas|seconds"):
        ReplicaWait(replicas, timeout)
