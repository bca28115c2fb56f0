"""The ``Gate`` contract (``scheduler._gate``), held by both gates on a fake clock:
``LocalGate`` in memory, ``ClusterGate`` against a real redis-server that decides by the
same clock (``time_source="caller"``). Then what only a shared gate promises: a slot's
concurrency across workers, leases renewed by ``upkeep``, everything handed back by
``close``, and Redis out of reach read as ``FrontierUnavailable``."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from redis.asyncio import Redis

from skitter._clock import FakeClock
from skitter.cluster import ClusterGate, RedisPoliteness
from skitter.engine import Stats
from skitter.exceptions import FrontierUnavailable
from skitter.frontier import Lease
from skitter.http import Request
from skitter.redis import JobKeys
from skitter.scheduler import Gate, LocalGate, SlotPolicies, SlotPolicy, SlotQueues
from skitter.testing._redis import RedisServer, require_redis_server

HOST = "example.com"
LEASE = 30.0

MakeGate = Callable[[], Gate]


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def stats() -> Stats:
    return Stats()


@pytest.fixture
async def client(server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(server.url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def cluster_gates(client: Redis, clock: FakeClock, stats: Stats) -> MakeGate:
    """Gates of workers of one job (each call: another worker), on the fake clock."""
    keys = JobKeys.for_job("shop", "nightly")
    workers = itertools.count()

    def make() -> Gate:
        store = RedisPoliteness(client, keys, owner=f"w{next(workers)}", time_source="caller")
        return ClusterGate(store, clock=clock, stats=stats, lease_seconds=LEASE)

    return make


@pytest.fixture(params=["local", "cluster"])
def make_gate(request: pytest.FixtureRequest, clock: FakeClock) -> MakeGate:
    if request.param == "local":
        return lambda: LocalGate(clock)
    made: MakeGate = request.getfixturevalue("cluster_gates")
    return made


def slot_queues(concurrency: int = 8) -> SlotQueues[Lease]:
    return SlotQueues(SlotPolicies(SlotPolicy(concurrency=concurrency)))


def popped(slots: SlotQueues[Lease], clock: FakeClock, n: int = 0) -> tuple[str, Lease]:
    """A task of HOST as the scheduler holds it when it asks the gate: just popped."""
    lease = Lease(f"t{n}", Request(f"http://{HOST}/{n}"), 0, clock.time() + LEASE)
    slots.push(HOST, 0, lease)
    got = slots.pop(clock.monotonic())
    assert got is not None and got[1] is lease
    return got


async def dispatches(gate: Gate) -> int:
    """How many dispatches the gate admits now, one after another."""
    count = 0
    while count < 1000 and await gate.admit():
        gate.dispatched()
        count += 1
    return count


# -- the contract, for both gates ---------------------------------------------------------
async def test_without_a_rate_every_dispatch_is_admitted(make_gate: MakeGate) -> None:
    gate = make_gate()
    assert gate.rate == (None, None)
    assert await dispatches(gate) == 1000
    assert gate.wait_time() is None


async def test_rate_and_burst_read_back_as_set(make_gate: MakeGate) -> None:
    gate = make_gate()
    gate.set_rate(2.0, 5.0)
    assert gate.rate == (2.0, 5.0)
    gate.set_rate(None, None)
    assert gate.rate == (None, None)


async def test_a_burst_then_the_rate_by_the_injected_clock(
    make_gate: MakeGate, clock: FakeClock
) -> None:
    gate = make_gate()
    gate.set_rate(2.0, 3.0)
    assert await dispatches(gate) == 3
    assert not await gate.admit()
    wait = gate.wait_time()
    assert wait == pytest.approx(0.5, abs=0.01)
    clock.advance(wait / 2)
    assert not await gate.admit(), "no token before the wait it named"
    clock.advance(wait / 2 + 0.001)
    assert await dispatches(gate) == 1


async def test_an_admission_not_dispatched_is_kept_for_the_next_dispatch(
    make_gate: MakeGate,
) -> None:
    gate = make_gate()
    gate.set_rate(1.0, 1.0)
    assert await gate.admit()
    assert await gate.admit(), "no slot could start: the admission is still there"
    gate.dispatched()
    assert not await gate.admit()


async def test_a_popped_task_gets_its_slot_and_gives_it_back(
    make_gate: MakeGate, clock: FakeClock
) -> None:
    gate = make_gate()
    slots = slot_queues()
    key, lease = popped(slots, clock)
    assert await gate.acquire(key, lease, slots) == 0.0
    gate.dispatched()
    slots.finished(key, clock.monotonic(), latency=0.1, status=200)
    await gate.release(key, lease, slots)
    await gate.upkeep(renew=True)
    await gate.close()


# -- what a shared gate promises besides --------------------------------------------------
async def test_a_slots_concurrency_holds_across_the_workers(
    cluster_gates: MakeGate, clock: FakeClock, stats: Stats
) -> None:
    mine, theirs = cluster_gates(), cluster_gates()
    my_slots, their_slots = slot_queues(concurrency=1), slot_queues(concurrency=1)
    key, first = popped(my_slots, clock, 1)
    assert await mine.acquire(key, first, my_slots) == 0.0
    key, second = popped(their_slots, clock, 2)
    assert await theirs.acquire(key, second, their_slots) > 0, "the slot is full for the job"
    assert stats.get("scheduler/cluster_slot_waits") == 1
    my_slots.finished(key, clock.monotonic(), status=200)
    await mine.release(key, first, my_slots)
    assert await theirs.acquire(key, second, their_slots) == 0.0


async def test_a_back_off_one_worker_met_holds_for_all(
    cluster_gates: MakeGate, clock: FakeClock
) -> None:
    mine, theirs = cluster_gates(), cluster_gates()
    my_slots, their_slots = slot_queues(), slot_queues()
    key, lease = popped(my_slots, clock, 1)
    assert await mine.acquire(key, lease, my_slots) == 0.0
    my_slots.finished(key, clock.monotonic(), status=503, retry_after=20.0)
    await mine.release(key, lease, my_slots)
    key, other = popped(their_slots, clock, 2)
    wait = await theirs.acquire(key, other, their_slots)
    assert wait == pytest.approx(20.0, abs=0.1)


async def test_upkeep_renews_what_the_gate_holds(cluster_gates: MakeGate, clock: FakeClock) -> None:
    mine, theirs = cluster_gates(), cluster_gates()
    my_slots, their_slots = slot_queues(concurrency=1), slot_queues(concurrency=1)
    key, lease = popped(my_slots, clock, 1)
    assert await mine.acquire(key, lease, my_slots) == 0.0
    clock.advance(LEASE * 0.8)
    await mine.upkeep(renew=True)
    clock.advance(LEASE * 0.8)  # past the first lease, within the renewed one
    key, other = popped(their_slots, clock, 2)
    assert await theirs.acquire(key, other, their_slots) > 0
    clock.advance(LEASE)  # nobody renews it any more: it lapses
    assert await theirs.acquire(key, other, their_slots) == 0.0


async def test_close_hands_everything_back_at_once(
    cluster_gates: MakeGate, clock: FakeClock
) -> None:
    mine, theirs = cluster_gates(), cluster_gates()
    my_slots, their_slots = slot_queues(concurrency=1), slot_queues(concurrency=1)
    key, lease = popped(my_slots, clock, 1)
    assert await mine.acquire(key, lease, my_slots) == 0.0
    await mine.close()
    key, other = popped(their_slots, clock, 2)
    assert await theirs.acquire(key, other, their_slots) == 0.0


async def test_redis_out_of_reach_is_frontier_unavailable_and_release_never_raises(
    clock: FakeClock, stats: Stats
) -> None:
    with RedisServer(binary=require_redis_server()) as server:
        client = Redis.from_url(server.url)
        store = RedisPoliteness(
            client, JobKeys.for_job("shop", "nightly"), owner="w", time_source="caller"
        )
        gate = ClusterGate(store, clock=clock, stats=stats, lease_seconds=LEASE)
        slots = slot_queues()
        key, lease = popped(slots, clock)
        assert await gate.acquire(key, lease, slots) == 0.0
        server.stop()
        try:
            gate.set_rate(1.0, 1.0)
            with pytest.raises(FrontierUnavailable, match=r"Redis for shop/nightly \(politeness\)"):
                await gate.admit()
            _, other = popped(slots, clock, 2)
            with pytest.raises(FrontierUnavailable):
                await gate.acquire(key, other, slots)
            slots.finished(key, clock.monotonic(), status=200)
            await gate.release(key, lease, slots)  # lapses with its lease
            await gate.close()
        finally:
            await client.aclose()
