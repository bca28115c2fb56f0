"""Background work, owned (``skitter._tasks``).

``cancel_and_wait``: a task that swallows a cancellation (as Python 3.11's
``asyncio.wait_for`` does when its inner future completes at the same moment) is
cancelled again until it has really stopped. ``Background``: one task of a service,
started once, stopped for sure, its failure in ``health``. ``TaskSet``: tasks kept
until they end and cancelled together. ``periodic``: one step every interval, on a
clock's schedule or after each step."""

from __future__ import annotations

import asyncio

import pytest

from skitter._tasks import Background, Health, TaskSet, cancel_and_wait, periodic
from skitter.testing import virtual_clock


async def test_a_task_that_swallows_its_first_cancellations_is_stopped() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                # cancelled long before: the task swallows the cancellations
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if swallowed == 2:
                    raise
                swallowed += 1  # what wait_for does to a cancel that races its result

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait(task, every=0.01), 5)
    assert task.cancelled() and swallowed == 2


async def test_an_exception_of_the_task_is_raised() -> None:
    async def broken() -> None:
        raise ValueError("boom")

    task = asyncio.create_task(broken())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="boom"):
        await cancel_and_wait(task)


async def test_a_background_task_runs_until_stopped_and_says_so() -> None:
    started = asyncio.Event()

    async def work() -> None:
        started.set()
        await asyncio.Event().wait()

    task = Background("work")
    assert task.health() == Health(running=False)
    task.start(work())
    await started.wait()
    assert task.running and task.health() == Health(running=True)
    await task.stop()
    assert not task.running and task.health() == Health(running=False)
    await task.stop()  # twice is harmless


async def test_a_background_task_that_died_says_of_what() -> None:
    task = Background("broken")

    async def broken() -> None:
        raise ValueError("boom")

    task.start(broken())
    await task.wait()  # not raised here
    health = task.health()
    assert not health.running and isinstance(health.failure, ValueError)
    task.start(broken())
    with pytest.raises(ValueError, match="boom"):
        await task.join()


async def test_a_running_background_task_is_not_started_twice() -> None:
    task = Background("once")
    task.start(asyncio.Event().wait())
    second = asyncio.Event().wait()
    with pytest.raises(RuntimeError, match="once is already running"):
        task.start(second)
    assert second.cr_frame is None  # closed, never left to warn "never awaited"
    await task.stop()


async def test_a_shielded_join_leaves_the_work_running_when_the_wait_is_cancelled() -> None:
    release = asyncio.Event()
    task = Background("shielded")
    task.start(release.wait())
    waiter = asyncio.ensure_future(task.join(shield=True))
    await asyncio.sleep(0)
    await cancel_and_wait(waiter)
    assert task.running
    release.set()
    await task.join()
    assert task.health() == Health(running=False)


async def test_a_task_set_keeps_its_tasks_until_they_end_and_cancels_the_rest() -> None:
    tasks = TaskSet()
    release = asyncio.Event()
    quick = tasks.spawn(release.wait())
    slow = tasks.spawn(asyncio.Event().wait())
    assert len(tasks) == 2 and set(tasks) == {quick, slow}
    release.set()
    await quick
    assert list(tasks) == [slow]  # an ended task is let go
    await tasks.cancel()
    assert slow.cancelled() and len(tasks) == 0


async def test_a_task_set_waits_for_its_tasks_without_raising_their_errors() -> None:
    tasks = TaskSet()

    async def broken() -> None:
        raise ValueError("boom")

    task = tasks.spawn(broken())
    await tasks.wait()
    assert isinstance(task.exception(), ValueError) and len(tasks) == 0


@pytest.mark.virtual_time
async def test_periodic_steps_on_the_clocks_schedule_whatever_a_step_takes() -> None:
    clock = virtual_clock()
    start = clock.monotonic()
    times: list[float] = []

    async def slow_step() -> None:
        times.append(clock.monotonic() - start)
        await asyncio.sleep(3)  # a slow step does not shift the next one

    task = Background("every 10 s")
    task.start(periodic(10, slow_step, clock=clock))
    await asyncio.sleep(35)  # virtual: three steps and half of the next wait
    await task.stop()
    assert times == [10, 20, 30]


@pytest.mark.virtual_time
async def test_periodic_without_a_clock_waits_after_each_step_and_may_step_first() -> None:
    clock = virtual_clock()
    start = clock.monotonic()
    times: list[float] = []

    async def slow_step() -> None:
        times.append(clock.monotonic() - start)
        await asyncio.sleep(3)  # virtual: a slow step, which the next wait follows

    task = Background("after each")
    task.start(periodic(10, slow_step, first=True))
    await asyncio.sleep(30)  # virtual: steps at 0, 13 and 26
    await task.stop()
    assert times == [0, 13, 26]


async def test_periodic_ends_with_the_error_of_a_step() -> None:
    async def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await periodic(0, broken)
