"""The roster of a job's workers on a real redis-server: a worker gone for good (killed,
or finished long ago) leaves it at the next beat of any live worker, so restarts of a
long-running job, each a new worker id, never grow it without bound."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from skitter.cluster import Heartbeat, JobControl
from skitter.redis import JobKeys


async def test_workers_gone_for_good_are_pruned_by_a_live_workers_beat(
    client: Redis, keys: JobKeys
) -> None:
    control = JobControl(client, keys)
    for restart in range(150):  # a worker restarted 150 times: a new id each time
        await control.beat(f"host:{restart}:tag", Heartbeat(status="running"), stale_after=60)
    _, roster = await control.read()
    assert len(roster) == 150
    # Their minute has passed: each one's "stale at" (Redis ms) moved to long ago, rather
    # than a short stale_after and a sleep, which a loaded machine outlasts mid-loop.
    await client.zadd(keys.workers_seen, {f"host:{r}:tag": 1 for r in range(150)})
    # Heartbeats carry the worker's own clock; the roster is pruned by Redis's.
    await control.beat("live", Heartbeat(status="running", seen=0), stale_after=60)
    _, roster = await control.read()
    assert len(roster) == 51  # at most 100 leave per beat: a short script each time
    await control.beat("live", Heartbeat(status="running"), stale_after=60)
    _, roster = await control.read()
    assert list(roster) == ["live"]
    assert await client.zrange(keys.workers_seen, 0, -1) == [b"live"]


async def test_a_worker_that_keeps_beating_stays_and_its_control_record_comes_back(
    client: Redis, keys: JobKeys
) -> None:
    control = JobControl(client, keys)
    await control.set_paused(True, now=1.0)
    for _ in range(5):
        record = await control.beat("steady", Heartbeat(status="paused"), stale_after=60)
        await control.beat("other", Heartbeat(status="running"), stale_after=60)
        assert record.paused and record.pause_seq == 1
    _, roster = await control.read()
    assert sorted(roster) == ["other", "steady"]
    # Each beat moves the worker's "stale at" to a minute after that beat (Redis ms).
    await client.zadd(keys.workers_seen, {"steady": 1})
    await control.beat("steady", Heartbeat(status="paused"), stale_after=60)
    seconds, micros = await client.time()
    now_ms = seconds * 1000 + micros // 1000
    assert now_ms < await client.zscore(keys.workers_seen, "steady") <= now_ms + 60_000
    # both keys expire with the roster, and clear() takes both
    assert 0 < await client.pttl(keys.workers_seen) <= 3_600_000
    await control.clear()
    assert await client.exists(keys.workers, keys.workers_seen, keys.control) == 0


async def test_stale_after_must_be_positive(client: Redis, keys: JobKeys) -> None:
    with pytest.raises(ValueError, match="stale_after"):
        await JobControl(client, keys).beat("w", Heartbeat(), stale_after=0)
