"""Scrapy's ``scrapy.utils.asyncio``: timers, sleeps and threads for code written to run on
either Twisted or asyncio. skitter always runs on asyncio, so each has its asyncio meaning
only; called with no event loop running they fail as asyncio does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["CallLaterResult", "call_later", "is_asyncio_available", "run_in_thread", "sleep"]

T = TypeVar("T")


def is_asyncio_available() -> bool:
    """True: skitter's code always runs inside an asyncio event loop."""
    return True


class CallLaterResult:
    """A timer made by :func:`call_later`; ``cancel()`` may be called after it fired or
    was cancelled already."""

    __slots__ = ("_handle",)

    def __init__(self, handle: asyncio.TimerHandle | None = None) -> None:
        self._handle = handle

    @classmethod
    def from_asyncio(cls, timer_handle: asyncio.TimerHandle) -> CallLaterResult:
        return cls(timer_handle)

    def cancel(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.cancel()


def call_later(delay: float, func: Callable[..., object], *args: Any) -> CallLaterResult:
    """Call ``func(*args)`` after ``delay`` seconds on the running event loop."""
    loop = asyncio.get_running_loop()
    return CallLaterResult(loop.call_later(delay, func, *args))


async def sleep(seconds: float) -> None:
    """Wait ``seconds`` without blocking the event loop."""
    await asyncio.sleep(seconds)


async def run_in_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``func(*args, **kwargs)`` in a worker thread, awaited."""
    return await asyncio.to_thread(func, *args, **kwargs)
