"""``LeasePolicy.eager_held``: a local crawl's eager pulls stop once that many leased
tasks wait in the slot queues (the rest stays packed in the frontier), yet a slot that
can start is still found behind a crowd of tasks that cannot (more are leased then, up
to ``max_held``). On a fake clock, over the memory frontier."""

from __future__ import annotations

import pytest

from skitter._clock import FakeClock
from skitter.engine import Stats
from skitter.frontier import Lease, MemoryFrontier
from skitter.http import Request
from skitter.scheduler import (
    LeasePolicy,
    LocalGate,
    ProjectScheduler,
    RetryPolicy,
    SlotPolicies,
    SlotPolicy,
    SlotQueues,
)


def _scheduler(clock: FakeClock, lease: LeasePolicy, concurrency: int) -> ProjectScheduler:
    slots: SlotQueues[Lease] = SlotQueues(SlotPolicies(SlotPolicy(concurrency=concurrency)))
    return ProjectScheduler(
        MemoryFrontier(),
        retry=RetryPolicy([1.0], 1),
        slots=slots,
        stats=Stats(),
        clock=clock,
        gate=LocalGate(clock),
        lease=lease,
    )


async def test_eager_pulls_stop_at_eager_held() -> None:
    sched = _scheduler(FakeClock(), LeasePolicy(batch=4, eager_held=6), concurrency=100)
    await sched.enqueue([Request(f"http://a.example/{n}") for n in range(200)])
    started = [await sched.next_request() for _ in range(30)]
    assert [lease.request.url for lease in started if lease is not None] == [
        f"http://a.example/{n}" for n in range(30)
    ]
    assert sched.held < 6 + 4  # below the bound, plus at most one batch
    without = _scheduler(FakeClock(), LeasePolicy(batch=4), concurrency=100)
    await without.enqueue([Request(f"http://a.example/{n}") for n in range(200)])
    for _ in range(30):
        assert await without.next_request() is not None
    assert without.held >= 30 * 4 - 30  # the default pulls a batch before each dispatch


async def test_a_slot_that_can_start_is_found_behind_tasks_that_cannot() -> None:
    sched = _scheduler(FakeClock(), LeasePolicy(batch=2, eager_held=2), concurrency=1)
    crowd = [Request(f"http://a.example/{n}") for n in range(20)]
    await sched.enqueue([*crowd, Request("http://b.example/")])
    first = await sched.next_request()
    assert first is not None and first.request.url == "http://a.example/0"
    second = await sched.next_request()  # a.example is busy: leased past its tasks
    assert second is not None and second.request.url == "http://b.example/"


def test_eager_held_is_checked() -> None:
    with pytest.raises(ValueError, match="eager_held must be >= 1"):
        LeasePolicy(eager_held=0)
    assert LeasePolicy(max_held=10, eager_held=50).eager_limit == 10
    assert LeasePolicy(max_held=10).eager_limit == 10
