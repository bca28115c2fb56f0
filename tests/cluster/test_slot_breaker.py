"""A slot's circuit breaker is one for the whole cluster (issue 14): failures in a row by
any workers open it for all of them, and the cluster then sends ``probes`` downloads.
A real redis-server; at the end, two workers in this process on virtual time against a
real HTTP server that fails every request and records when each arrives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis
from test_cluster_rate import virtual_worker

from skitter import Request, Response, Spider
from skitter.cluster import RedisPoliteness
from skitter.redis import JobKeys
from skitter.testing import VirtualTimeLoop

T0 = 1_700_000_000.0
HOST = "example.com"
LEASE = 30.0
BREAKER = (3, 10.0, 2)  # threshold, pause, probes


@pytest.fixture
def pair(client: Redis, keys: JobKeys) -> tuple[RedisPoliteness, RedisPoliteness]:
    return (
        RedisPoliteness(client, keys, owner="worker-a", time_source="caller"),
        RedisPoliteness(client, keys, owner="worker-b", time_source="caller"),
    )


async def take(worker: RedisPoliteness, now: float) -> tuple[str | None, float]:
    return await worker.acquire(
        HOST, now, concurrency=100, delay=0, lease_seconds=LEASE, breaker=BREAKER
    )


async def download(worker: RedisPoliteness, now: float, ok: bool) -> None:
    permit, wait = await take(worker, now)
    assert permit is not None, wait
    await worker.release(HOST, permit, now, ok=ok, breaker=BREAKER)


async def test_failures_by_two_workers_open_it_for_both(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    await download(a, T0, ok=False)
    await download(b, T0 + 1, ok=False)
    await download(a, T0 + 2, ok=False)  # the third in a row, by either worker
    assert await take(a, T0 + 2) == (None, pytest.approx(10.0))
    assert await take(b, T0 + 5) == (None, pytest.approx(7.0))


async def test_a_success_between_failures_keeps_it_closed(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    for worker, ok in ((a, False), (b, False), (a, True), (b, False), (a, False)):
        await download(worker, T0, ok)
    permit, _ = await take(b, T0)
    assert permit is not None


async def test_after_the_pause_the_cluster_sends_probes_then_closes_on_a_success(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    for _ in range(3):
        await download(a, T0, ok=False)
    probe_a, _ = await take(a, T0 + 10)
    probe_b, _ = await take(b, T0 + 10)
    assert probe_a is not None and probe_b is not None  # two probes for the cluster
    assert await take(a, T0 + 11) == (None, pytest.approx(9.0)), "every probe is out"
    await b.release(HOST, probe_b, T0 + 11, ok=True, breaker=BREAKER)
    for _ in range(5):  # closed: no limit but concurrency
        permit, _ = await take(a, T0 + 11)
        assert permit is not None


async def test_failed_probes_open_it_again(pair: tuple[RedisPoliteness, RedisPoliteness]) -> None:
    a, b = pair
    for _ in range(3):
        await download(b, T0, ok=False)
    await download(a, T0 + 10, ok=False)
    await download(b, T0 + 10, ok=False)  # both probes failed: another pause
    assert await take(a, T0 + 10) == (None, pytest.approx(10.0))
    permit, _ = await take(a, T0 + 20)
    assert permit is not None


async def test_results_that_arrive_while_open_are_ignored(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, b = pair
    late, _ = await take(b, T0)  # sent before the breaker opened
    assert late is not None
    for _ in range(3):
        await download(a, T0, ok=False)
    await b.release(HOST, late, T0 + 1, ok=True, breaker=BREAKER)
    assert await take(a, T0 + 1) == (None, pytest.approx(9.0)), "still open"


async def test_unanswered_probes_get_a_new_round_after_a_pause(
    pair: tuple[RedisPoliteness, RedisPoliteness],
) -> None:
    a, _ = pair
    for _ in range(3):
        await download(a, T0, ok=False)
    for _ in range(2):
        permit, _ = await take(a, T0 + 10)
        assert permit is not None  # their results never come (a worker died)
    assert (await take(a, T0 + 15))[0] is None
    assert (await take(a, T0 + 20))[0] is not None


async def test_the_breaker_outlives_its_pause_in_redis(
    client: Redis, keys: JobKeys, pair: tuple[RedisPoliteness, RedisPoliteness]
) -> None:
    a = RedisPoliteness(client, keys, owner="w", time_source="caller", idle_ttl=1.0)
    for _ in range(3):
        await download(a, T0, ok=False)
    assert 10_000 < await client.pttl(keys.pace(HOST)) <= 11_000


# -- end to end ------------------------------------------------------------------------------
class Failing(Spider):
    name = "tree"
    base = ""

    def start_requests(self) -> Any:
        for n in range(200):
            yield Request(f"{self.base}/p/{n}")

    def parse(self, response: Response) -> Any:
        yield {"n": response.url}


def broken_site() -> tuple[web.Application, list[float]]:
    """A host that always fails, stamping each arrival with the virtual seconds since
    the test began."""
    arrivals: list[float] = []

    async def page(request: web.Request) -> web.Response:
        arrivals.append(round(asyncio.get_running_loop().time() - VirtualTimeLoop.START, 6))
        return web.Response(status=500, text="down")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app, arrivals


@pytest.mark.virtual_time
async def test_a_host_failing_ten_times_pauses_every_worker_then_gets_the_probes(
    serve: Any, redis_url: str
) -> None:
    app, arrivals = broken_site()
    base = await serve(app)
    pause = 3.0
    breaker = {"breaker_threshold": 10, "breaker_pause": pause, "breaker_probes": 2}
    settings = {
        "DOWNLOAD_SLOTS": {"127.0.0.1": {"concurrency": 2, **breaker}},
        "BREAKER_THRESHOLD": 0,  # the project's own breaker stays out of it
        "RETRY_TIMES": 0,
        "CLOSESPIDER_TIMEOUT": 9,
        "FAIL_WHEN_NO_START_SUCCEEDS": False,
    }
    workers = [virtual_worker(redis_url, base, Failing, **settings) for _ in range(2)]
    await asyncio.gather(*(worker.run() for worker in workers))
    before = [t for t in arrivals if t < pause]
    # Ten failures in a row, plus at most what was in flight on the host (2, cluster-wide).
    assert 10 <= len(before) <= 12, arrivals
    opened = before[-1]  # the failure that opened it
    # No request during the pause; then the cluster's two probes, and another pause.
    after = arrivals[len(before) :]
    assert after == [opened + pause] * 2 + [opened + 2 * pause] * 2, arrivals
