"""Time as an injected dependency.

The scheduling cores (queues, token buckets, breakers, retry tables) never read the
system clock themselves: they take a ``Clock``. Production code passes ``SystemClock``;
tests pass ``FakeClock`` and move time by hand, so a 300 s pause is tested in
microseconds and never flakes.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["Clock", "FakeClock", "SystemClock"]


class Clock(Protocol):
    """A source of time in seconds."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back; for deadlines and intervals."""
        ...

    def time(self) -> float:
        """Seconds since the epoch; for timestamps stored or shown to people."""
        ...


class SystemClock:
    """The real clocks of the machine."""

    __slots__ = ()

    monotonic = staticmethod(time.monotonic)
    time = staticmethod(time.time)


class FakeClock:
    """A clock that only moves when told to. Both readings move together."""

    __slots__ = ("_epoch", "_now")

    def __init__(self, start: float = 1000.0, epoch: float = 1_700_000_000.0) -> None:
        self._now = start
        self._epoch = epoch - start

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._epoch + self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock never goes back")
        self._now += seconds
