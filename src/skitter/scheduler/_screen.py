"""What a Scrapy project's ``DUPEFILTER_CLASS`` and ``REQUEST_FINGERPRINTER_CLASS`` do
to requests on their way into the frontier.

By default a request's taskid is skitter's own fingerprint and the frontier's merge by
taskid is the only duplicate filter, so the scheduler builds no ``Screen`` and pays
nothing. A project that names its own fingerprinter gets taskids from it (the frontier,
the job directory and Redis then key tasks by that fingerprint); one that names a dupe
filter gets Scrapy's order: the filter is asked first, and what it has seen is dropped
and logged through it; the frontier still merges the rest by taskid.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Protocol

from skitter.dupefilters import build_dupefilter
from skitter.http import Request
from skitter.signals import spider_closed, spider_opened
from skitter.utils.request import RequestFingerprinter

__all__ = ["DupeFilter", "Fingerprinter", "Screen", "scheduler_screen"]

log = logging.getLogger("skitter.scheduler")


class Fingerprinter(Protocol):
    """Scrapy's request fingerprinter: ``crawler.request_fingerprinter``."""

    def fingerprint(self, request: Request) -> bytes: ...


class DupeFilter(Protocol):
    """The part of Scrapy's ``BaseDupeFilter`` the scheduler calls per request."""

    def request_seen(self, request: Request) -> bool: ...

    def log(self, request: Request, spider: Any) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Screen:
    """A project's own fingerprinter and dupe filter (either may be None)."""

    fingerprinter: Fingerprinter | None = None
    dupefilter: DupeFilter | None = None
    spider: Any = None

    def screened(
        self, requests: list[Request], outcomes: list[tuple[Request, bool]] | None
    ) -> tuple[list[Request], list[bool]]:
        """``requests`` with the project's taskids, less those the dupe filter has seen
        (each logged by the filter and, if ``outcomes`` is given, recorded as dropped),
        and whether each is ``dont_filter`` (those pass untouched, as in Scrapy)."""
        kept: list[Request] = []
        for request in requests:
            if not request.dont_filter:
                self._set_taskid(request)
                if self._seen(request):
                    if outcomes is not None:
                        outcomes.append((request, False))
                    continue
            kept.append(request)
        return kept, [request.dont_filter for request in kept]

    def _set_taskid(self, request: Request) -> None:
        """The fingerprinter's fingerprint (hex) as the taskid, unless one was named."""
        if self.fingerprinter is not None and not request.has_explicit_taskid:
            request.taskid = self.fingerprinter.fingerprint(request).hex()

    def _seen(self, request: Request) -> bool:
        """Whether the dupe filter has seen ``request`` (then it logs it, as Scrapy's
        scheduler has it do)."""
        if self.dupefilter is None or not self.dupefilter.request_seen(request):
            return False
        self.dupefilter.log(request, self.spider)
        return True


def scheduler_screen(crawler: Any, spider: Any) -> Screen | None:
    """What the scheduler asks about each request on its way in: the crawler's own
    fingerprinter (a REQUEST_FINGERPRINTER_CLASS other than the default) and the
    DUPEFILTER_CLASS; None when neither is set, so that the default costs nothing.
    The filter opens and closes with the spider."""
    fingerprinter = crawler.request_fingerprinter
    own = None if type(fingerprinter) is RequestFingerprinter else fingerprinter
    dupefilter = build_dupefilter(crawler)
    if dupefilter is not None:
        crawler.signals.connect(lambda: dupefilter.open(), spider_opened)
        crawler.signals.connect(lambda reason: dupefilter.close(reason), spider_closed)
        if getattr(crawler, "cluster", None) is not None:
            log.warning(
                "DUPEFILTER_CLASS: each worker has its own %s, which sees only that "
                "worker's requests; the job's frontier merges the rest by taskid",
                type(dupefilter).__name__,
            )
    if own is None and dupefilter is None:
        return None
    return Screen(own, dupefilter, spider)
