"""A project's circuit breaker: pause a project whose tasks keep failing.

pyspider's rule, as a three-state machine on an injected clock::

    CLOSED --threshold failures in a row--> OPEN --pause seconds--> HALF_OPEN
      ^                                      ^                          |
      |                                      +---- probes failures -----+
      +------------------------- a success -----------------------------+

While OPEN nothing is dispatched. HALF_OPEN lets ``probes`` tasks through; the first
success closes the breaker, ``probes`` failures open it again for another pause.
Outcomes are counted, not matched to the tasks that were let through (as pyspider
does): results that arrive while OPEN belong to tasks sent before the pause and are
ignored, since they say nothing new. If the probes' results never arrive (a task was
dropped by a middleware, say), a new round of probes is allowed after another
``pause``, so a project can never be stuck half-open.

Transitions are kept as ``BreakerEvent`` records for the async shell to log and count
(``take_events``).
"""

from __future__ import annotations

import enum
from collections import deque
from typing import NamedTuple

from skitter._clock import Clock, SystemClock

__all__ = ["BreakerEvent", "BreakerState", "CircuitBreaker"]

_SYSTEM_CLOCK = SystemClock()


class BreakerState(enum.Enum):
    CLOSED = "closed"  # dispatching normally
    OPEN = "open"  # paused until ``reopens_at``
    HALF_OPEN = "half-open"  # letting a few probes through


class BreakerEvent(NamedTuple):
    """A transition, at a time on the breaker's (monotonic) clock."""

    old: BreakerState
    new: BreakerState
    at: float
    failures: int  # consecutive failures that led here (0 when closing)


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failures, for ``pause`` seconds, then
    tries ``probes`` tasks. ``threshold <= 0`` disables it (always closed)."""

    __slots__ = (
        "_clock",
        "_events",
        "_failures",
        "_opened_at",
        "_probes_sent",
        "_state",
        "pause",
        "probes",
        "threshold",
    )

    def __init__(
        self,
        threshold: int = 10,
        pause: float = 300.0,
        probes: int = 3,
        clock: Clock = _SYSTEM_CLOCK,
    ) -> None:
        if pause < 0:
            raise ValueError(f"breaker pause must be >= 0 seconds, got {pause!r}")
        if probes < 1:
            raise ValueError(f"breaker probes must be >= 1, got {probes!r}")
        self.threshold = threshold
        self.pause = float(pause)
        self.probes = probes
        self._clock = clock
        self._state = BreakerState.CLOSED
        self._failures = 0  # consecutive failures while CLOSED, probe failures while HALF_OPEN
        self._probes_sent = 0
        self._opened_at = 0.0  # when OPEN began, or when the current probe round began
        self._events: deque[BreakerEvent] = deque(maxlen=100)

    @property
    def state(self) -> BreakerState:
        """The state now; an OPEN breaker whose pause is over reads as HALF_OPEN."""
        self._tick()
        return self._state

    @property
    def reopens_at(self) -> float | None:
        """When an OPEN breaker lets probes through (monotonic clock), else None."""
        if self._state is BreakerState.OPEN:
            return self._opened_at + self.pause
        return None

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def would_allow(self) -> bool:
        """What ``allow()`` would answer now, without using up a probe."""
        state = self.state
        if state is BreakerState.CLOSED:
            return True
        return state is BreakerState.HALF_OPEN and self._probes_sent < self.probes

    def allow(self) -> bool:
        """May a task be dispatched now? Call it once per dispatch: while HALF_OPEN each
        True is one of the ``probes``."""
        if self._state is BreakerState.CLOSED:
            return True
        self._tick()
        if self._state is BreakerState.HALF_OPEN and self._probes_sent < self.probes:
            self._probes_sent += 1
            return True
        return False

    def record_success(self) -> None:
        """A task succeeded: closes a HALF_OPEN breaker, resets the failure count."""
        if self._state is BreakerState.OPEN:
            return
        if self._state is BreakerState.HALF_OPEN:
            self._move(BreakerState.CLOSED, 0)
        self._failures = 0

    def record_failure(self) -> None:
        """A task failed: may open the breaker."""
        state = self._state
        if state is BreakerState.OPEN or self.threshold <= 0:
            return
        self._failures += 1
        limit = self.threshold if state is BreakerState.CLOSED else self.probes
        if self._failures >= limit:
            self._open()

    def reset(self) -> None:
        """Close the breaker now (a person resumed the project)."""
        if self._state is not BreakerState.CLOSED:
            self._move(BreakerState.CLOSED, 0)
        self._failures = 0

    def take_events(self) -> list[BreakerEvent]:
        """The transitions since the last call, oldest first (at most the last 100)."""
        events = list(self._events)
        self._events.clear()
        return events

    # -- internals ----------------------------------------------------------------------
    def _tick(self) -> None:
        """Time-driven transitions: the pause ends; a silent probe round expires."""
        state = self._state
        if state is BreakerState.CLOSED:
            return
        now = self._clock.monotonic()
        if now < self._opened_at + self.pause:
            return
        if state is BreakerState.OPEN:
            self._move(BreakerState.HALF_OPEN, self._failures)
        elif self._probes_sent >= self.probes:
            self._opened_at = now  # probes unanswered for a whole pause: try again
        else:
            return
        self._probes_sent = 0
        self._failures = 0

    def _open(self) -> None:
        self._move(BreakerState.OPEN, self._failures)

    def _move(self, new: BreakerState, failures: int) -> None:
        now = self._clock.monotonic()
        self._events.append(BreakerEvent(self._state, new, now, failures))
        self._state = new
        if new is not BreakerState.CLOSED:
            self._opened_at = now

    def __repr__(self) -> str:
        return f"<CircuitBreaker {self._state.value} failures={self._failures}>"
