"""Scrapy's ``scrapy.core.scheduler``: the scheduler API plug-ins build on.

skitter's crawl is scheduled by its own frontier and slot scheduler
(``skitter.scheduler``), which merges duplicates by taskid and asks a
``DUPEFILTER_CLASS`` first when one is set. This module is for code written against
Scrapy's scheduler interface: a plug-in that subclasses ``Scheduler`` or builds one to get
at its duplicate filter (``scheduler.df``), a test that drives one by hand. ``Scheduler``
is a working one-process scheduler with Scrapy's methods: requests by priority (highest
first, then in the order they came), filtered by the ``DUPEFILTER_CLASS`` (Scrapy's
``RFPDupeFilter`` when the setting is None, since that is what skitter's frontier merge
amounts to), counted in the crawl's ``scheduler/*`` stats.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from typing import TYPE_CHECKING, Any, Self

from skitter.dupefilters import RFPDupeFilter, build_dupefilter
from skitter.settings import EngineSettings

if TYPE_CHECKING:
    from skitter.http import Request

__all__ = ["BaseScheduler", "Scheduler"]

log = logging.getLogger(__name__)

_REQUIRED = ("has_pending_requests", "enqueue_request", "next_request")


class _SchedulerMeta(type):
    """Makes ``isinstance`` / ``issubclass`` against ``BaseScheduler`` true for any class
    with the three methods an engine calls, as Scrapy's check is by interface."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return cls.__subclasscheck__(type(instance))

    def __subclasscheck__(cls, subclass: type) -> bool:
        return all(callable(getattr(subclass, name, None)) for name in _REQUIRED)


class BaseScheduler(metaclass=_SchedulerMeta):
    """The least a scheduler offers: requests in, requests out, whether any are left."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        return cls()

    def open(self, spider: Any) -> None:
        """Called when the spider opens."""

    def close(self, reason: str) -> None:
        """Called when the spider closes, with the reason."""

    def has_pending_requests(self) -> bool:
        raise NotImplementedError

    def enqueue_request(self, request: Request) -> bool:
        """Take ``request``; False when it was dropped (a duplicate)."""
        raise NotImplementedError

    def next_request(self) -> Request | None:
        """The next request to download, or None when there is none right now."""
        raise NotImplementedError


class Scheduler(BaseScheduler):
    """A one-process scheduler: a priority queue in memory behind a duplicate filter.

    ``jobdir`` is where the filter keeps the requests it has seen (``RFPDupeFilter``'s
    ``requests.seen``); the pending queue itself is not written there, so closing with
    requests still queued under a ``JOBDIR`` is logged as a warning (a resumed job
    would not find them), never silently dropped."""

    def __init__(
        self,
        dupefilter: Any,
        jobdir: str | None = None,
        stats: Any = None,
        crawler: Any = None,
    ) -> None:
        self.df = dupefilter
        self.jobdir = jobdir
        self.stats = stats
        self.crawler = crawler
        self.spider: Any = None
        self._queue: list[tuple[int, int, Request]] = []
        self._order = itertools.count()

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        dupefilter = build_dupefilter(crawler)
        if dupefilter is None:
            dupefilter = RFPDupeFilter.from_crawler(crawler)
        jobdir = crawler.settings.view(EngineSettings).jobdir or None
        return cls(dupefilter, jobdir=jobdir, stats=crawler.stats, crawler=crawler)

    def open(self, spider: Any) -> None:
        self.spider = spider
        self.df.open()

    def close(self, reason: str) -> None:
        if self.jobdir and self._queue:
            log.warning(
                "Scheduler closed with %d requests pending: they are not kept in JOBDIR "
                "%s, a resumed job will not find them",
                len(self._queue),
                self.jobdir,
            )
        self.df.close(reason)

    def has_pending_requests(self) -> bool:
        return bool(self._queue)

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        heapq.heappush(self._queue, (-request.priority, next(self._order), request))
        self._inc("scheduler/enqueued")
        self._inc("scheduler/enqueued/memory")
        return True

    def next_request(self) -> Request | None:
        if not self._queue:
            return None
        request = heapq.heappop(self._queue)[2]
        self._inc("scheduler/dequeued")
        self._inc("scheduler/dequeued/memory")
        return request

    def __len__(self) -> int:
        return len(self._queue)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)
