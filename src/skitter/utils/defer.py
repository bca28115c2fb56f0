"""Scrapy's ``scrapy.utils.defer``: the bridges between Twisted Deferreds and asyncio.

skitter has no Deferreds of its own, but code written for Scrapy (plug-ins, tests) may still
hold one made by a Twisted library. The bridges that have an asyncio meaning work on such
an object without skitter importing Twisted: a Deferred becomes an asyncio Future, and an
awaitable stays what it is. Making a Deferred (``deferred_from_coro``) needs Twisted itself:
it is imported then, and its absence is a clear error, not a silent coroutine.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from typing import Any

__all__ = [
    "deferred_from_coro",
    "deferred_to_future",
    "ensure_awaitable",
    "maybe_deferred_to_future",
]


def _is_deferred(obj: Any) -> bool:
    """A Twisted Deferred, recognised by its asyncio bridge rather than by importing
    Twisted (which skitter does not depend on)."""
    return callable(getattr(obj, "asFuture", None)) and callable(getattr(obj, "addCallbacks", None))


def deferred_to_future(d: Any) -> asyncio.Future[Any]:
    """An asyncio Future that completes with the Deferred ``d``; needs a running loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = d.asFuture(loop)
    return future


def maybe_deferred_to_future(d: Any) -> Any:
    """Something to ``await`` under asyncio: a Deferred as a Future, anything already
    awaitable as it is, a plain value as a Future done with it."""
    if _is_deferred(d):
        return deferred_to_future(d)
    if inspect.isawaitable(d):
        return d
    # A plain value: skitter's version of a Scrapy API that returns a Deferred did the
    # work already (a feed storage's blocking ``store``); awaiting gives the value.
    try:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    except RuntimeError:
        return d
    future.set_result(d)
    return future


def deferred_from_coro(o: Any) -> Any:
    """A coroutine or Future as a Twisted Deferred (its task scheduled on the running
    loop); a Deferred or anything else is returned as it is, as in Scrapy."""
    if _is_deferred(o) or not (inspect.isawaitable(o)):
        return o
    try:
        from twisted.internet.defer import Deferred
    except ImportError:
        if inspect.iscoroutine(o):
            o.close()
        raise RuntimeError(
            "deferred_from_coro() makes a Twisted Deferred, and Twisted is not installed: "
            "skitter runs on asyncio, await the coroutine instead"
        ) from None
    return Deferred.fromFuture(asyncio.ensure_future(o))


async def _process_pending_io() -> None:
    """Let the event loop run what is ready (callbacks, finished I/O) before going on:
    Scrapy's helper for a test that must see work in progress."""
    for _ in range(2):
        await asyncio.sleep(0)


async def _value(o: Any) -> Any:
    return o


def ensure_awaitable(o: Any, _warn: str | None = None) -> Awaitable[Any]:
    """``o`` as something to await: a Deferred as a Future, an awaitable as it is, any
    other value as a coroutine that returns it."""
    if _is_deferred(o):
        return deferred_to_future(o)
    if inspect.isawaitable(o):
        return o
    return _value(o)
