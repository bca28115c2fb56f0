"""A callback's output, whatever it returned, as one async iterator of its objects."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterable
from typing import Any

from skitter.http import Request
from skitter.items import is_item

__all__ = ["aiter_output"]


def aiter_output(result: Any) -> AsyncIterator[Any]:
    """What a callback returned, as an async iterator of the objects it produced.

    Accepts None, one Request or item, a list or any iterable, a generator, an async
    iterable (async generator), or an awaitable whose result is any of those. Anything
    else (a string, a number, a Response) comes out as a single object, for the engine
    to report with the callback's name: iterating a string would hide the mistake.
    """
    if result is None:
        return _nothing()
    if isinstance(result, Request) or is_item(result):
        return _one(result)
    if hasattr(result, "__aiter__"):
        return aiter(result)
    if isinstance(result, str | bytes | bytearray):
        return _one(result)
    if inspect.isawaitable(result):
        return _awaited(result)
    if isinstance(result, Iterable):
        return _from_iterable(result)
    return _one(result)


async def _nothing() -> AsyncIterator[Any]:
    return
    yield  # pragma: no cover - makes this an async generator


async def _one(obj: Any) -> AsyncIterator[Any]:
    yield obj


async def _from_iterable(iterable: Iterable[Any]) -> AsyncIterator[Any]:
    for obj in iterable:
        yield obj


async def _awaited(awaitable: Any) -> AsyncIterator[Any]:
    result = await awaitable
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise TypeError("a callback's awaitable returned another awaitable; await it inside")
    async for obj in aiter_output(result):
        yield obj
