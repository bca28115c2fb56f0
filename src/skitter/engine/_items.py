"""CONCURRENT_ITEMS: up to N items of one callback in the item pipelines at once.

Scrapy's meaning: the items one response yields go through the pipelines in parallel,
up to CONCURRENT_ITEMS of them (100 by default), so that a pipeline that waits (a
database, an API, a media pipeline's store) does not make the others wait in line.
Items wait only where a pipeline awaits, so the scraper asks for a window only when
one does (``ItemPipelineManager.awaits``); with synchronous pipelines every item goes
through whole before the next is taken, and nothing is gained by starting tasks.

What the feeds see: with a window, the items of one response reach the pipelines after
an awaiting one, and the feeds, in the order they get through it, not necessarily the
order the callback yielded them (as in Scrapy). CONCURRENT_ITEMS = 1 keeps the
callback's order. Items of different responses were never ordered among themselves.

The callback's task ends only once every item it started is through: its requests,
media requests included, are queued, and it is acknowledged, after its items. An
item's error (a feed that cannot be written, ``CloseSpider``) stops the taking of more
output; the items already started are seen through, then the first error is raised,
as it would have been had the items gone one at a time. If the task is cancelled, so
are its items.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from skitter._tasks import TaskSet

__all__ = ["ItemWindow"]


class ItemWindow:
    """The items of one callback in the pipelines, at most ``limit`` at a time."""

    __slots__ = ("_error", "_limit", "_running")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._running = TaskSet()
        #: The first error an item raised; raised once the others are through.
        self._error: BaseException | None = None

    async def start(self, item: Coroutine[Any, Any, None]) -> None:
        """Run ``item`` (its way through the pipelines) once fewer than ``limit`` are on
        theirs; the first error an item raised, once every started item is through."""
        try:
            while len(self._running) >= self._limit and self._error is None:
                await self._wait(asyncio.FIRST_COMPLETED)
            if self._error is not None:
                await self.finish()  # raises it
        except BaseException:
            item.close()  # never started
            raise
        self._running.spawn(item).add_done_callback(self._done)

    async def finish(self) -> None:
        """Wait until every item is through; raise the first error one raised."""
        while self._running:
            await self._wait(asyncio.ALL_COMPLETED)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    async def _wait(self, when: str) -> None:
        try:
            await asyncio.wait(self._running, return_when=when)
        except asyncio.CancelledError:
            await self.cancel()
            raise

    async def cancel(self) -> None:
        """The callback's task is cancelled: so are the items it started."""
        await self._running.cancel()

    def _done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()  # retrieved whether or not it is the first
        if self._error is None:
            self._error = error
