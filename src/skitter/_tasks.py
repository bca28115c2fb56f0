"""Background work, owned: the one place skitter starts a task outside a task group.

A task nobody owns is a bug waiting: asyncio keeps only a weak reference to it (it may
be collected mid-run), nothing stops it when its owner closes, and its exception is
logged as "never retrieved" long after, if at all. So every background loop here
(heartbeats, stats flushes, uploads, acks, dashboards, progress lines, monitors) is a
``Background`` of a ``Service`` that starts it, stops it for sure and reports its
health; every fire-and-forget set of tasks (signal handlers run in the background, the
items of one callback, the agent's output watchers) is a ``TaskSet`` that keeps them
and cancels them together; and every loop that does one step every so often is
``periodic``. ``tests/test_architecture.py`` refuses any other ``create_task``.

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
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from skitter._clock import Clock

__all__ = [
    "Background",
    "Health",
    "Service",
    "TaskSet",
    "cancel_and_wait",
    "periodic",
]

T = TypeVar("T")


async def cancel_and_wait(task: asyncio.Task[Any], *, every: float = 0.1) -> None:
    """Cancel ``task`` (again every ``every`` seconds while it runs on) and wait for it to
    end; its CancelledError is absorbed, any other exception raised."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=every)
    with contextlib.suppress(asyncio.CancelledError):
        await task


@dataclass(frozen=True, slots=True)
class Health:
    """How a service is: ``running``, and if its work ended by an error, which."""

    running: bool
    failure: BaseException | None = None


class Service(Protocol):
    """Something that works in the background for its owner's lifetime.

    ``start`` returns once the service is ready (its resources open, its first round
    done: whoever started it may rely on it from then on); ``stop`` ends it for sure
    and may be called more than once; ``health`` says, without waiting, whether it is
    still at work and what ended it if it died."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def health(self) -> Health: ...


class Background:
    """The one task of a service: started by name, kept while it runs, stopped for sure
    (``cancel_and_wait``), its failure kept for ``health``. Not restartable while it
    runs: a second ``start`` is a bug, and says so."""

    __slots__ = ("_task", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._task: asyncio.Task[Any] | None = None

    def start(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` in the background (needs a running event loop)."""
        if self.running:
            work.close()
            raise RuntimeError(f"{self.name} is already running")
        self._task = asyncio.get_running_loop().create_task(work, name=self.name)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def health(self) -> Health:
        task = self._task
        if task is None or not task.done():
            return Health(running=task is not None)
        failure = None if task.cancelled() else task.exception()
        return Health(running=False, failure=failure)

    async def stop(self) -> None:
        """Cancel the work and wait until it has ended (an error it ended with raised)."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    async def wait(self) -> None:
        """Wait for the work to end by itself (its error, if any, is not raised)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def join(self, *, shield: bool = False) -> None:
        """Wait for the work to end by itself, its error raised. Cancelling the wait
        cancels the work too, unless ``shield``."""
        if self._task is not None:
            await (asyncio.shield(self._task) if shield else self._task)


class TaskSet:
    """Tasks started outside any task group but owned: each kept until it ends (asyncio
    itself keeps only a weak reference) and all cancelled together. What each task's
    end means is its owner's business (``add_done_callback``)."""

    __slots__ = ("_tasks",)

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        """Run ``work`` as a task of this set (needs a running event loop)."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    async def wait(self) -> None:
        """Wait until every task has ended by itself (their errors are not raised)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def cancel(self) -> None:
        """Cancel every task still running and wait until they have ended."""
        running = list(self._tasks)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)


async def periodic(
    interval: float,
    step: Callable[[], Awaitable[object]],
    *,
    clock: Clock | None = None,
    first: bool = False,
) -> None:
    """Await ``step()`` every ``interval`` seconds until cancelled (or until ``step``
    raises: a step that must survive its errors catches them itself).

    With ``clock``, the steps keep that clock's schedule from the start (``start + n *
    interval``: a slow step does not shift the ones after it); without, each waits
    ``interval`` after the last ended. ``first`` steps once right away."""
    start = clock.monotonic() if clock is not None else 0.0
    if first:
        await step()
    beats = 0
    while True:
        beats += 1
        delay = interval
        if clock is not None:
            delay = max(0.0, start + beats * interval - clock.monotonic())
        await asyncio.sleep(delay)
        await step()
