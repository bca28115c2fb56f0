"""Scrapy's ``scrapy.utils.reactor``, for code that asks which event machinery it runs on.

skitter runs on asyncio and never installs a Twisted reactor, so only the questions have
answers here; installing or verifying a reactor is refused where it is asked for (the
``TWISTED_REACTOR`` setting), not faked.
"""

from __future__ import annotations

import sys

__all__ = ["is_asyncio_reactor_installed", "is_reactor_installed"]


def is_reactor_installed() -> bool:
    """Whether some code in this process installed a Twisted reactor (skitter does not):
    helpers shared with Twisted code pick their asyncio path when it is False."""
    return "twisted.internet.reactor" in sys.modules


def is_asyncio_reactor_installed() -> bool:
    """Whether the installed Twisted reactor runs on asyncio; a RuntimeError when there is
    none, as in Scrapy, because the question has no answer then."""
    if not is_reactor_installed():
        raise RuntimeError(
            "is_asyncio_reactor_installed(): no Twisted reactor is installed "
            "(skitter runs on asyncio without one)"
        )
    from twisted.internet import reactor

    return type(reactor).__name__ == "AsyncioSelectorReactor"
