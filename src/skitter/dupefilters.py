"""Scrapy's ``scrapy.dupefilters``: the duplicate-filter classes plug-ins subclass.

A crawl merges duplicates by taskid in its frontier, so by default it builds none of
these. ``DUPEFILTER_CLASS`` names one to ask first (``build_dupefilter``): the scheduler
drops what it has seen before the frontier merges the rest. The classes are also here for
code that subclasses them (scrapy-splash's ``SplashAwareDupeFilter`` is an
``RFPDupeFilter``) and for code that keeps a set of requests seen by itself.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import IO, Any, Self

from skitter._components import load_object
from skitter.exceptions import ScrapyDeprecationWarning
from skitter.http import Request
from skitter.settings import EngineSettings
from skitter.utils.misc import build_from_crawler
from skitter.utils.request import RequestFingerprinter, RequestFingerprinterProtocol

__all__ = ["BaseDupeFilter", "RFPDupeFilter", "build_dupefilter"]


class BaseDupeFilter:
    """A filter that lets every request through: the base of Scrapy's filter API."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        return cls()

    def request_seen(self, request: Request) -> bool:
        """Whether ``request`` was seen before (then the scheduler drops it)."""
        return False

    def open(self) -> None:
        """Called when the spider opens."""

    def close(self, reason: str) -> None:
        """Called when the spider closes, with the reason."""

    def log(self, request: Request, spider: Any) -> None:
        """Called for each request dropped as a duplicate: a filter that drops requests
        says how it logs them, so this base version is deprecated, as in Scrapy."""
        warnings.warn(
            "Calling BaseDupeFilter.log() is deprecated.", ScrapyDeprecationWarning, stacklevel=2
        )


class RFPDupeFilter(BaseDupeFilter):
    """Requests seen, by fingerprint (Scrapy's, in hex); kept in ``<path>/requests.seen``
    when a path is given (the job directory), so a resumed job remembers them."""

    def __init__(
        self,
        path: str | None = None,
        debug: bool = False,
        *,
        fingerprinter: RequestFingerprinterProtocol | None = None,
    ) -> None:
        self.fingerprinter: RequestFingerprinterProtocol = fingerprinter or RequestFingerprinter()
        self.fingerprints: set[str] = set()
        self.debug = debug
        self.logdupes = True  # the first duplicate is logged, then no more (unless debug)
        self.logger = logging.getLogger("skitter.dupefilters")
        self.file: IO[str] | None = None
        if path:
            self.file = (Path(path) / "requests.seen").open("a+", encoding="utf-8")
            self.file.seek(0)
            self.fingerprints.update(line.rstrip("\n") for line in self.file)

    @classmethod
    def from_crawler(cls, crawler: Any) -> Self:
        engine = crawler.settings.view(EngineSettings)
        fingerprinter = getattr(crawler, "request_fingerprinter", None)
        return cls(engine.jobdir or None, engine.dupefilter_debug, fingerprinter=fingerprinter)

    def request_fingerprint(self, request: Request) -> str:
        """The key a request is remembered by (subclasses change it: scrapy-splash)."""
        return self.fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        key = self.request_fingerprint(request)
        if key in self.fingerprints:
            return True
        self.fingerprints.add(key)
        if self.file is not None:
            self.file.write(key + "\n")
            self.file.flush()
        return False

    def close(self, reason: str) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def log(self, request: Request, spider: Any) -> None:
        if self.debug or self.logdupes:
            more = "" if self.debug else " (no more duplicates will be shown)"
            self.logger.debug("Filtered duplicate request: %s%s", request, more)
            self.logdupes = self.debug
        stats = getattr(getattr(spider, "crawler", None), "stats", None)
        if stats is not None:
            stats.inc_value("dupefilter/filtered")


def build_dupefilter(crawler: Any) -> Any:
    """The ``DUPEFILTER_CLASS`` of ``crawler``'s settings, built as Scrapy builds it
    (``from_crawler``, else an older filter's own ``from_settings``, else the class
    itself); None when the setting is None (the frontier's merge alone, at no cost)."""
    path = crawler.settings.view(EngineSettings).dupefilter_class
    if path is None:
        return None
    cls = load_object(path)
    from_settings = getattr(cls, "from_settings", None)
    if from_settings is not None and _defined_by(cls, "from_crawler") in (None, BaseDupeFilter):
        return from_settings(crawler.settings)
    return build_from_crawler(cls, crawler)


def _defined_by(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``name`` (None: none does)."""
    return next((klass for klass in cls.__mro__ if name in vars(klass)), None)
