"""Scrapy's ``scrapy.spidermiddlewares.metacopy``: a warning for a callback that copies
``response.meta`` into the requests it yields.

The downloader's middlewares keep their state in a request's meta (how many retries,
which redirects, how long the download took): a link built with
``meta=response.meta`` starts with the page's counts, so it is retried less, may stop
at the redirect limit, and reports the wrong latency. Not in the default chain; add it
to SPIDER_MIDDLEWARES to hear about it, once per crawl, with the keys found.
"""

from __future__ import annotations

import logging
from typing import Any

from skitter._types import CrawlContext
from skitter.http import Request
from skitter.settings import SpiderSettings
from skitter.spider import BaseSpiderMiddleware

__all__ = ["MetaCopyDetectionMiddleware"]

log = logging.getLogger(__name__)

#: Meta keys skitter's downloader middlewares and transports set on a request for
#: themselves; a request a callback makes should not start with them.
INTERNAL_KEYS = frozenset(
    (
        "_dont_cache",
        "_scheme_proxy",
        "cached_response",
        "download_latency",
        "redirect_reasons",
        "redirect_times",
        "redirect_ttl",
        "redirect_urls",
        "retry_times",
    )
)


class MetaCopyDetectionMiddleware(BaseSpiderMiddleware):
    """Warns once when a request yielded from a callback carries an internal meta key
    (less those in META_COPY_WARN_SKIP_KEYS); start requests are not looked at."""

    def __init__(self, crawler: Any = None) -> None:
        super().__init__(crawler)
        own = crawler.settings.view(SpiderSettings) if crawler else None
        skip = own.meta_copy_warn_skip_keys if own is not None else ()
        self.keys = INTERNAL_KEYS - set(skip)
        self._warned = False

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> MetaCopyDetectionMiddleware:
        return cls(crawler)

    def get_processed_request(self, request: Request, response: Any) -> Request | None:
        if response is None or self._warned or not request.meta:
            return request
        found = sorted(self.keys.intersection(request.meta))
        if found:
            self._warned = True
            log.warning(
                "%r, yielded from the callback of %r, carries meta keys the downloader sets "
                "for itself: %s. Copying response.meta into a new request carries them over "
                "(retry and redirect counts, latency); build the new meta from the keys you "
                "need. Further cases are not reported.",
                request,
                response,
                ", ".join(found),
            )
        return request
