"""The web UI and control API of running crawls.

``Dashboard`` serves, on the crawl's own event loop: a page in pyspider's manner (the
projects with status, rate and burst to click and change, queues, counts over 5
minutes, an hour and all time, a pages/s chart; the active tasks, recent results,
failures, failed tasks to retry and download slots of one project), the JSON API
behind it, and ``/metrics`` for Prometheus. It listens on 127.0.0.1 unless told
otherwise, and needs a token when exposed. Given a ``ClusterSource`` instead of
crawlers, it shows the jobs of a distributed crawl from Redis (``skitter dashboard``).
"""

from typing import Any

from skitter.dashboard._server import Dashboard

__all__ = ["Dashboard"]


def __getattr__(name: str) -> Any:
    """``ClusterSource`` (the jobs of a distributed crawl, for ``Dashboard``) is imported
    on first use, so that a crawl's own dashboard never loads redis-py; it is left out
    of ``__all__`` for the same reason."""
    if name == "ClusterSource":
        from skitter.dashboard._source import ClusterSource

        return ClusterSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
