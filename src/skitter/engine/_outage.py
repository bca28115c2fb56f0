"""Riding out a task store that is out of reach (``FrontierUnavailable``).

Wherever the outage shows (the dispatcher's lease, a task's push of its children or its
ack, the upkeep, the start requests, a periodic callback), it is reported here, and the
dispatcher pauses: it dispatches nothing for a while (0.5 s, doubling to 5 s) and tries
again, while running tasks go on. The outage ends with the next task settled (or when
there is nothing left to do), not with the next lease: Redis out of memory still hands
out leases but takes no pushes, and a crawl that only re-downloads the same pages must
not count as recovered. One that lasts FRONTIER_OUTAGE_TIMEOUT fails every project
still running.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from skitter._clock import Clock
from skitter.engine._project import Project
from skitter.exceptions import FrontierOutage, FrontierUnavailable

__all__ = ["OutageRider"]

log = logging.getLogger("skitter.engine")


class OutageRider:
    """The engine's state of the task store's reachability, and how it waits."""

    def __init__(self, clock: Clock, timeout: float, wake: Callable[[], None]) -> None:
        self._clock = clock
        #: How long an outage may last before the crawl fails (0 = forever).
        self._timeout = timeout
        self._wake = wake
        self._delay = 0.0
        #: When the current outage began; None while the store is reachable.
        self.since: float | None = None
        #: An outage met outside the dispatcher, for the dispatcher to ride out.
        self.pending: FrontierUnavailable | None = None

    def report(self, exc: FrontierUnavailable) -> None:
        """Met outside the dispatcher: it pauses, backs off and counts it, as if its own
        call had failed."""
        self.pending = exc
        self._wake()

    def raise_pending(self) -> None:
        """For the dispatcher: an outage reported elsewhere is raised here."""
        if self.pending is not None:
            raise self.pending

    async def ride_out(self, exc: FrontierUnavailable, projects: Sequence[Project]) -> None:
        """Count the outage and wait before the next try; past the timeout, fail every
        project still running instead."""
        now = self._clock.monotonic()
        self.pending = None
        if self.since is None:
            self.since = now
            log.warning("Task store unavailable, pausing dispatch: %s", exc)
        for project in projects:
            project.stats.inc("engine/frontier_unavailable")
        timeout = self._timeout
        if timeout > 0 and now - self.since >= timeout:
            outage = FrontierOutage(
                f"the task store has been unavailable for {now - self.since:.0f} s "
                f"(FRONTIER_OUTAGE_TIMEOUT is {timeout:g} s): {exc}"
            )
            for project in projects:
                if project.closing is None:
                    project.fail(outage)
            self._wake()
            return
        self._delay = min(5.0, max(0.5, self._delay * 2))
        await asyncio.sleep(self._delay)

    def over(self) -> None:
        """A task was settled (or there is nothing left to do): any outage is over."""
        if self.since is not None:
            log.info(
                "Task store available again after %.0f s, dispatching",
                self._clock.monotonic() - self.since,
            )
            self._delay = 0.0
            self.since = None
