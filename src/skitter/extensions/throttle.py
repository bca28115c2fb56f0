"""Scrapy's AutoThrottle *extension* (``scrapy.extensions.throttle.AutoThrottle``).

In a skitter crawl AUTOTHROTTLE_ENABLED is all it takes: the scheduler's slots apply the
AutoThrottle policy (``skitter.scheduler.AutoThrottle``) to every download, with or
without this class. The class is Scrapy's extension API on top of the same policy, for
code that builds it, drives it (``_spider_opened``, ``_response_downloaded``) or lists
it in EXTENSIONS: it adjusts the ``delay`` of the slots of ``crawler.engine.downloader``
where the engine has them (Scrapy's engine, a test's stand-in). skitter's engine has no
such slots; there it leaves the throttling to the scheduler, so a slot is never adjusted
twice for one download.

As in Scrapy: it is not configured (``NotConfigured``) unless AUTOTHROTTLE_ENABLED is
set, nor with an AUTOTHROTTLE_TARGET_CONCURRENCY that is not above 0; a request with no
``download_latency``, no ``download_slot`` or ``meta["autothrottle_dont_adjust_delay"]``
changes nothing; AUTOTHROTTLE_DEBUG logs every adjustment.
"""

from __future__ import annotations

import logging
from typing import Any

from skitter import exceptions, http, settings, signals
from skitter.extensions._throttle_policy import AutoThrottle as _Policy

__all__ = ["AutoThrottle"]

_logger = logging.getLogger(__name__)


class AutoThrottle:
    """Adjusts an engine's download slot delays from the latency of each download."""

    def __init__(self, crawler: Any) -> None:
        own = crawler.settings.view(settings.PolitenessSettings)
        if not own.autothrottle_enabled:
            raise exceptions.NotConfigured
        target = own.autothrottle_target_concurrency
        if not target > 0.0:
            raise exceptions.NotConfigured(
                f"AUTOTHROTTLE_TARGET_CONCURRENCY ({target!r}) must be above 0."
            )
        self.crawler = crawler
        self._settings = own
        self.debug: bool = own.autothrottle_debug
        self.target_concurrency: float = float(target)
        self.mindelay: float = float(own.download_delay)
        self.maxdelay: float = float(own.autothrottle_max_delay)
        self._policy = _Policy(own.autothrottle_start_delay, self.maxdelay, target)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Any) -> AutoThrottle:
        return cls(crawler)

    def _spider_opened(self, spider: Any) -> None:
        """Read the delays again (a spider's settings are in by now) and start the
        engine's downloader, where it has one, at AUTOTHROTTLE_START_DELAY."""
        own = self._settings
        self.mindelay = float(own.download_delay)
        self.maxdelay = float(own.autothrottle_max_delay)
        self._policy = _Policy(own.autothrottle_start_delay, self.maxdelay, self.target_concurrency)
        downloader = self._downloader()
        if downloader is not None:
            downloader._delay = self._policy.initial_delay(self.mindelay)

    def _downloader(self) -> Any:
        """The engine's downloader, if the engine has one with slots (Scrapy's engine)."""
        downloader = getattr(getattr(self.crawler, "engine", None), "downloader", None)
        return downloader if hasattr(downloader, "slots") else None

    def _response_downloaded(
        self, response: http.Response, request: http.Request, spider: Any
    ) -> None:
        meta = request.meta
        latency = meta.get("download_latency")
        key = meta.get("download_slot")
        downloader = self._downloader()
        if latency is None or key is None or downloader is None:
            return
        slot = downloader.slots.get(key)
        if slot is None or meta.get("autothrottle_dont_adjust_delay", False) is True:
            return
        olddelay = slot.delay
        self._adjust_delay(slot, latency, response)
        if self.debug:
            self._log(key, slot, olddelay, latency, response, spider)

    def _adjust_delay(self, slot: Any, latency: float, response: http.Response) -> None:
        """The policy's next delay for ``slot``, between DOWNLOAD_DELAY and
        AUTOTHROTTLE_MAX_DELAY; a response other than 200 never lowers it."""
        slot.delay = self._policy.next_delay(
            slot.delay, latency, response.status, min_delay=self.mindelay
        )

    @staticmethod
    def _log(
        key: str, slot: Any, olddelay: float, latency: float, response: http.Response, spider: Any
    ) -> None:
        _logger.info(
            "slot: %(slot)s | conc:%(concurrency)2d | delay:%(delay)5d ms (%(delaydiff)+d) | "
            "latency:%(latency)5d ms | size:%(size)6d bytes",
            {
                "slot": key,
                "concurrency": len(slot.transferring),
                "delay": slot.delay * 1000,
                "delaydiff": (slot.delay - olddelay) * 1000,
                "latency": latency * 1000,
                "size": len(response.body),
            },
            extra={"spider": spider},
        )
