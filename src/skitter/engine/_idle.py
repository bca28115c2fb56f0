"""When "nothing to do" means "done": the worker's idle grace and the spider_idle signal.

A crawl on its own is done as soon as nothing is left. A worker of a distributed crawl
is not: another worker may still yield requests, or URLs may be pushed, so it ends only
once the job has been idle for the whole grace (negative: never, it waits for pushed
URLs). Time is read from the injected clock, so the grace is tested on a fake one.

Then the spider's ``spider_idle`` handlers have their say, as in Scrapy: one may keep it
open (``DontCloseSpider``), close it with its own reason (``CloseSpider``), or queue
more requests (``crawler.engine.crawl``), after which it is no longer idle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skitter._clock import Clock
from skitter._failure import Failure
from skitter.exceptions import CloseSpider, DontCloseSpider
from skitter.signals import spider_idle

if TYPE_CHECKING:
    from skitter.engine._project import Project

__all__ = ["IdleGrace", "spider_idle_verdict"]


async def spider_idle_verdict(project: Project) -> bool | None:
    """Send spider_idle (if anyone listens): False if a handler raised DontCloseSpider,
    None if one raised CloseSpider (the project is then closing), else True."""
    signals = project.signals
    if spider_idle not in signals.live:
        return True
    results = await signals.send_catch_log_async(
        spider_idle, spider=project.spider, dont_log=(DontCloseSpider, CloseSpider)
    )
    failures = [result for _, result in results if isinstance(result, Failure)]
    for failure in failures:
        if failure.check(CloseSpider):
            project.request_close(failure.value.reason)  # type: ignore[attr-defined]
            return None
    return not any(failure.check(DontCloseSpider) for failure in failures)


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
