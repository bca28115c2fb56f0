"""Scrapy's ``scrapy.utils.test``: a crawler for a component's unit test."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skitter.utils.spider import DefaultSpider

if TYPE_CHECKING:
    from skitter.crawler import Crawler
    from skitter.spider import Spider

__all__ = [
    "get_crawler",
    "get_from_asyncio_queue",
    "get_pythonpath",
    "get_reactor_settings",
    "get_testenv",
]

T = TypeVar("T")


def get_crawler(
    spidercls: type[Spider] | None = None,
    settings_dict: Mapping[str, Any] | None = None,
    prevent_warnings: bool = True,
) -> Crawler:
    """A Crawler for ``spidercls`` (a plain default spider when None) with
    ``settings_dict`` as the project's settings, not started: its ``settings``,
    ``stats`` and ``signals`` are ready for a component's ``from_crawler``.
    ``prevent_warnings`` is accepted for Scrapy's signature; skitter has no warning
    about a default setting to silence."""
    # The composition root is above this module's layer: taken when called, so that
    # importing Scrapy's path for the helper does not build anything.
    from skitter.crawler import Crawler

    return Crawler(spidercls or DefaultSpider, settings=settings_dict)


def get_from_asyncio_queue(value: T) -> Awaitable[T]:
    """An awaitable that gives ``value`` back only after a pass through an asyncio queue:
    a test's way to make a callback really suspend once before it returns."""
    queue: asyncio.Queue[T] = asyncio.Queue()
    getter = queue.get()
    queue.put_nowait(value)
    return getter


def get_reactor_settings() -> dict[str, Any]:
    """The settings a crawler in this process needs to match its event machinery: none,
    since skitter always runs on asyncio and has no reactor to choose."""
    return {}


def get_pythonpath() -> str:
    """``PYTHONPATH`` for a child process that must import this skitter (the folder that
    holds the package first, then what the variable already held)."""
    here = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH", "")]))


def get_testenv() -> dict[str, str]:
    """The environment for a test's child process: this process's, with
    :func:`get_pythonpath`, so the child imports this skitter rather than another
    installed copy."""
    return {**os.environ, "PYTHONPATH": get_pythonpath()}
