"""The event loop a synchronous entry point starts (ASYNCIO_EVENT_LOOP, Scrapy's name).

A crawl is CPU-bound in Python, and part of that CPU is the event loop's own: uvloop's
loop and transports (libuv, in C) cost less per socket event than asyncio's, so when
uvloop is installed (``skitter[speed]``) the CLI, ``skitter.crawler.crawl`` and
``CrawlerProcess`` run on it unless told otherwise. Code that runs its own loop
(``await crawler.run()``) keeps that loop: skitter never swaps a running one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from skitter.exceptions import ConfigError

__all__ = ["LOOPS", "loop_factory", "run"]

T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]
LOOPS = ("auto", "asyncio", "uvloop")
_UVLOOP_NAMES = ("uvloop", "uvloop.Loop", "uvloop.EventLoopPolicy")


def loop_factory(value: object) -> LoopFactory | None:
    """What ASYNCIO_EVENT_LOOP asks for: ``auto`` (uvloop when installed, else asyncio's
    loop), ``asyncio`` or None (asyncio's own, Scrapy's default), ``uvloop`` (Scrapy's
    ``uvloop.Loop`` too: required, a ConfigError naming the extra when missing). None
    stands for asyncio's default loop. Anything else is a ConfigError."""
    if value is None or value == "asyncio":
        return None
    if value == "auto":
        try:
            import uvloop
        except ImportError:
            return None
        return uvloop.new_event_loop
    if value in _UVLOOP_NAMES:
        try:
            import uvloop
        except ImportError:
            raise ConfigError(
                f"ASYNCIO_EVENT_LOOP={value}: uvloop is not installed "
                "(pip install 'skitter[speed]')"
            ) from None
        return uvloop.new_event_loop
    raise ConfigError(
        f"ASYNCIO_EVENT_LOOP must be one of {', '.join(LOOPS)} (or Scrapy's uvloop.Loop), "
        f"got {value!r}"
    )


def run(coro: Coroutine[Any, Any, T], loop: object = "auto") -> T:
    """``asyncio.run(coro)`` on the loop ``loop`` (an ASYNCIO_EVENT_LOOP value) names."""
    try:
        factory = loop_factory(loop)
    except ConfigError:
        coro.close()  # never awaited: say nothing of it
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)
