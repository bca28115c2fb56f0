"""The dashboard's view of a distributed crawl (``ClusterSource``: the jobs in Redis), a
module of its own so that a crawl's own dashboard never loads redis-py.
"""

from skitter.dashboard._source import ClusterSource

__all__ = [
    "ClusterSource",
]
