"""``cancel_and_wait``: a task that swallows a cancellation (as Python 3.11's
``asyncio.wait_for`` does when its inner future completes at the same moment) is
cancelled again until it has really stopped."""

from __future__ import annotations

import asyncio

import pytest

from skitter._tasks import cancel_and_wait


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
