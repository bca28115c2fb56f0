"""``wait_until``: wait for a state that no event announces, with a bound.

A test often waits for something another task (a crawl, a worker, a server) brings
about: "the crawl has fetched three pages", "the job is listed as running". A bare
``await asyncio.sleep(0.3)`` guesses how long that takes: too short on a loaded machine
(a flake), too long everywhere else (a slow suite). Polling the condition itself ends as
soon as it holds, and the bound turns a hang into a failure that names the condition.
The bound is on the loop's time, so on a ``VirtualTimeLoop`` it is virtual too.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

__all__ = ["wait_until"]

_T = TypeVar("_T")

#: Seconds between two looks: short enough not to slow a test, long enough not to spin a
#: shared CPU while a real server or process does the work.
POLL_INTERVAL = 0.01


async def wait_until(
    condition: Callable[[], _T | Awaitable[_T]],
    *,
    timeout: float = 10.0,  # noqa: ASYNC109 - named in the error, unlike asyncio.timeout's
    interval: float = POLL_INTERVAL,
) -> _T:
    """Return ``condition()``'s first truthy value (it may be sync or async), looking
    again every ``interval`` seconds; ``TimeoutError`` after ``timeout`` seconds."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                value = condition()
                result = await value if inspect.isawaitable(value) else value
                if result:
                    return cast("_T", result)
                await asyncio.sleep(interval)
    except TimeoutError:
        name = getattr(condition, "__qualname__", repr(condition))
        raise TimeoutError(f"wait_until: {name} still false after {timeout:g} s") from None
