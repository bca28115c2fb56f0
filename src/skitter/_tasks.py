"""Stopping a background task for sure.

A task is stopped by cancelling it, but one cancel is not always enough on Python 3.11:
``asyncio.wait_for`` (which redis-py wraps around socket reads and writes) swallows a
cancellation that arrives just as its inner future completes, and returns that result
instead (python/cpython#86296, fixed in 3.12). A loop that was talking to Redis at that
moment carries on as if never cancelled, and whoever awaited it waits for ever: a worker
that never exits, a test that hangs. ``cancel_and_wait`` cancels again until the task
has really ended.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(task: asyncio.Task[object], *, every: float = 0.1) -> None:
    """Cancel ``task`` (again every ``every`` seconds while it runs on) and wait for it to
    end; its CancelledError is absorbed, any other exception raised."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=every)
    with contextlib.suppress(asyncio.CancelledError):
        await task
