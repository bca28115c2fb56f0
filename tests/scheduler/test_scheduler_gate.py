"""``ProjectScheduler`` keeps its side of the ``Gate`` contract, whatever the gate: it
asks ``admit`` once a slot may start a task (not while the gate says to wait),
``acquire`` for the task it popped, ``dispatched`` when it hands it out and ``release``
once its download ended; a wait or ``FrontierUnavailable`` from ``acquire`` puts the
task back, with its slot waiting; its upkeep and close reach the gate; a rate above
MAX_RATE never reaches it. On a fake clock, over the memory frontier, with a gate that
records what it is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from skitter._clock import FakeClock
from skitter._types import DownloadReport
from skitter.engine import Stats
from skitter.exceptions import ConfigError, FrontierUnavailable
from skitter.frontier import Lease, MemoryFrontier
from skitter.http import Request
from skitter.scheduler import (
    LeasePolicy,
    ProjectScheduler,
    RateLimits,
    RetryPolicy,
    SlotPolicies,
    SlotPolicy,
    SlotQueues,
)


class RecordingGate:
    """A gate that admits everything and grants every slot unless told otherwise."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.admitting = True
        self.waits: list[float | Exception] = []  # what the next acquires answer
        self._rate: tuple[float | None, float | None] = (None, None)

    @property
    def rate(self) -> tuple[float | None, float | None]:
        return self._rate

    def set_rate(self, rate: float | None, burst: float | None) -> None:
        self.calls.append(("set_rate", rate, burst))
        self._rate = (rate, burst)

    async def admit(self) -> bool:
        self.calls.append(("admit",))
        return self.admitting

    def dispatched(self) -> None:
        self.calls.append(("dispatched",))

    async def acquire(self, slot: str, lease: Lease, slots: SlotQueues[Lease]) -> float:
        self.calls.append(("acquire", slot, lease.taskid))
        answer = self.waits.pop(0) if self.waits else 0.0
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def release(
        self,
        slot: str,
        lease: Lease,
        slots: SlotQueues[Lease],
        *,
        ok: bool = True,
        latency: float | None = None,
        status: int | None = None,
    ) -> None:
        self.calls.append(("release", slot, lease.taskid))

    def wait_time(self) -> float | None:
        return None if self.admitting else 7.0

    async def upkeep(self, renew: bool) -> None:
        self.calls.append(("upkeep", renew))

    async def close(self) -> None:
        self.calls.append(("close",))

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def gate() -> RecordingGate:
    return RecordingGate()


def scheduler(
    gate: RecordingGate, clock: FakeClock, slots: SlotQueues[Lease] | None = None, **kwargs: Any
) -> ProjectScheduler:
    return ProjectScheduler(
        MemoryFrontier(),
        retry=RetryPolicy([1.0], 1),
        slots=slots if slots is not None else SlotQueues(),
        stats=Stats(),
        clock=clock,
        gate=gate,
        lease=LeasePolicy(lease_seconds=30.0),
        **kwargs,
    )


async def test_each_dispatch_is_admitted_acquired_dispatched_and_released(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request("http://a.example/1")])
    lease = await sched.next_request()
    assert lease is not None
    assert gate.names() == ["admit", "acquire", "dispatched"]
    assert gate.calls[1] == ("acquire", "a.example", lease.taskid)
    await sched.record(lease, DownloadReport(latency=0.1, status=200))
    assert gate.calls[-1] == ("release", "a.example", lease.taskid)
    await sched.complete(lease)
    assert gate.names().count("release") == 1


async def test_a_download_report_frees_the_slot_and_carries_robots_crawl_delay(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request(f"http://a.example/{n}") for n in range(4)])
    first = await sched.next_request()
    assert first is not None
    await sched.record(first, DownloadReport(latency=0.1, status=200))  # robots.txt not obeyed
    second = await sched.next_request()
    assert second is not None, "the slot is free again, with no delay"
    await sched.record(second, DownloadReport(0.1, 200, robots=True, crawl_delay=2.0))
    # The download that read robots.txt counts: the next waits 2 s from its end.
    assert await sched.next_request() is None, "robots.txt asked for 2 s between downloads"
    clock.advance(2.0)
    third = await sched.next_request()
    assert third is not None
    await sched.record(third, DownloadReport(0.1, 200, robots=True, crawl_delay=2.0))
    assert await sched.next_request() is None
    clock.advance(2.0)
    assert await sched.next_request() is not None
    assert gate.names().count("release") == 3


async def test_a_gate_that_waits_is_not_asked_and_no_task_is_leased(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request("http://a.example/1")])
    gate.admitting = False
    assert await sched.next_request() is None
    assert gate.names() == [] and sched.held == 0
    assert await sched.next_wakeup() == 7.0, "the gate's wait wakes the engine"
    gate.admitting = True
    assert await sched.next_request() is not None


async def test_the_gate_is_asked_for_a_token_only_when_a_task_can_start(
    gate: RecordingGate, clock: FakeClock
) -> None:
    """A worker of a cluster that took the job's token with nothing to send kept it, and
    another worker's task waited for the token after: the job's first download came one
    token late."""
    policy = SlotPolicy(delay=2.0, randomize_delay=False)
    paced: SlotQueues[Lease] = SlotQueues(SlotPolicies(policy))
    sched = scheduler(gate, clock, paced)
    assert await sched.next_request() is None, "nothing queued"
    await sched.enqueue([Request(f"http://a.example/{n}") for n in range(2)])
    assert await sched.next_request() is not None
    assert await sched.next_request() is None, "the slot's delay runs"
    assert gate.names() == ["admit", "acquire", "dispatched"]
    clock.advance(2.0)
    assert await sched.next_request() is not None
    assert gate.names().count("admit") == 2


async def test_a_slot_the_gate_refuses_waits_as_long_as_it_says_and_keeps_its_task(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request("http://a.example/1")])
    gate.waits = [2.0]
    assert await sched.next_request() is None
    assert "dispatched" not in gate.names()
    assert await sched.next_request() is None, "the slot waits: the gate is not asked"
    assert gate.names().count("acquire") == 1
    assert await sched.is_finished() is False, "the task is still held here"
    clock.advance(2.0)
    lease = await sched.next_request()
    assert lease is not None and lease.request.url == "http://a.example/1"
    assert gate.names()[-2:] == ["acquire", "dispatched"]


async def test_the_gate_out_of_reach_propagates_and_the_task_is_given_back(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request("http://a.example/1")])
    gate.waits = [FrontierUnavailable("Redis for shop/nightly (politeness) cannot be reached")]
    with pytest.raises(FrontierUnavailable):
        await sched.next_request()
    clock.advance(1.0)
    lease = await sched.next_request()
    assert lease is not None, "the task came back once the gate answered again"


async def test_upkeep_renews_with_the_leases_and_close_reaches_the_gate(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.maintain()
    await sched.maintain()
    clock.advance(10.0)  # a third of the lease: the scheduler renews, the gate too
    await sched.maintain()
    assert [c for c in gate.calls if c[0] == "upkeep"] == [
        ("upkeep", True),
        ("upkeep", False),
        ("upkeep", True),
    ]
    await sched.close()
    assert gate.calls[-1] == ("close",)


async def test_rates_are_checked_before_the_gate_sees_them(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock, rate=2.0, limits=RateLimits(max_rate=5.0, max_burst=8.0))
    assert gate.calls == [("set_rate", 2.0, 8.0)], "the default burst, capped at MAX_BURST"
    with pytest.raises(ConfigError, match=r"rate 6/s is above MAX_RATE \(5/s\)"):
        sched.set_rate(6.0)
    with pytest.raises(ConfigError, match="an unlimited rate is above MAX_RATE"):
        sched.set_rate(None)
    with pytest.raises(ConfigError, match="rate and burst must be >= 0"):
        sched.set_rate(float("inf"))
    assert len(gate.calls) == 1
    sched.set_rate(4.0, 3.0)
    assert sched.rate == (4.0, 3.0)


async def test_pause_and_requeued_tasks_go_through_methods(
    gate: RecordingGate, clock: FakeClock
) -> None:
    sched = scheduler(gate, clock)
    await sched.enqueue([Request("http://a.example/1")])
    sched.pause()
    assert (sched.paused, sched.status) == (True, "paused")
    assert await sched.next_request() is None
    assert gate.calls == [], "a paused project asks the gate nothing"
    sched.resume()
    lease = await sched.next_request()
    assert lease is not None and sched.queued_estimate == 0
    await sched.fail(lease, "HTTP 500")
    assert await sched.retry_failed(domain="a.example") == 1
    assert sched.queued_estimate == 1
    assert await sched.next_request() is not None


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"SCHEDULER_MAX_HELD": 0}, "max_held must be >= 1"),
        ({"PROCESSING_TIMEOUT": 0}, "lease_seconds must be > 0"),
    ],
)
async def test_a_lease_setting_no_scheduler_can_work_with_is_refused_at_start(
    settings: dict[str, Any], named: str
) -> None:
    from skitter import Crawler, Spider

    class Nowhere(Spider):
        name = "nowhere"
        start_urls = ["http://127.0.0.1:1/"]

    crawler = Crawler(Nowhere, {**settings, "LOG_LEVEL": "WARNING"})
    with pytest.raises(ConfigError, match=rf"scheduler settings \(PROCESSING_TIMEOUT, .*{named}"):
        await asyncio.wait_for(crawler.run(), 5)
