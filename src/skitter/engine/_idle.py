"""The worker's idle grace (WORKER_IDLE_TIMEOUT): when "nothing to do" means "done".

A crawl on its own is done as soon as nothing is left. A worker of a distributed crawl
is not: another worker may still yield requests, or URLs may be pushed, so it ends only
once the job has been idle for the whole grace (negative: never, it waits for pushed
URLs). Time is read from the injected clock, so the grace is tested on a fake one.
"""

from __future__ import annotations

from skitter._clock import Clock

__all__ = ["IdleGrace"]


class IdleGrace:
    """How long the crawl has had nothing to do, against the grace it is allowed."""

    def __init__(self, grace: float, clock: Clock) -> None:
        self._grace = grace
        self._clock = clock
        #: When the idle state began; None while there is work.
        self.since: float | None = None

    def busy(self) -> None:
        """Work was found: the idle state, if any, is over."""
        self.since = None

    def long_enough(self) -> bool:
        """Nothing to do anywhere now: whether it has lasted the grace (the first call
        of an idle state starts it)."""
        if self._grace == 0:
            return True
        now = self._clock.monotonic()
        if self.since is None:
            self.since = now
        return self._grace > 0 and now - self.since >= self._grace
