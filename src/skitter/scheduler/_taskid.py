"""The taskid of a ``dont_filter`` request: one rule for every place that queues one.

Scrapy's ``dont_filter`` means "fetch this even if seen". In skitter a queued task
merges with a twin of the same taskid (the fingerprint, by default), so such a request
must not merge with a queued twin either: unless it names its own taskid, it gets one
of its own, its fingerprint and a tag. The scheduler tags each with a counter; the
start-request feed tags with the request's position among the start requests, so that
a feed resumed after a crash (or by another worker) merges with what it queued before
instead of running it twice.
"""

from __future__ import annotations

from skitter.http import Request

__all__ = ["own_taskid"]


def own_taskid(request: Request, tag: str) -> None:
    """Give a ``dont_filter`` request without an explicit taskid one of its own,
    ``<fingerprint>-<tag>`` (``tag`` unique within the crawl); others are left alone.
    Raises ``InvalidURL`` for a URL that cannot be fingerprinted."""
    if request.dont_filter and not request.has_explicit_taskid:
        request.taskid = f"{request.fingerprint.hex()}-{tag}"
