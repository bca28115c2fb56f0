"""The Redis the distributed benchmark crawls on: one private node, or (``--cluster``) a
real Redis Cluster of private masters, and what each run cost every node of it.

A cluster's work is spread over its masters, each with its own ``INFO``: a run's Redis
CPU, round trips and commands are the sums over the masters (``RedisCounters`` adds up),
and the figures of each master tell how a sharded job's work split between them.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import redis
from _redis_probe import RedisCounters

from skitter.testing._redis import RedisServer
from skitter.testing._redis_deploy import RedisClusterSet

__all__ = ["RedisTarget"]

CLUSTER_MIN_MASTERS = 3
"""``redis-cli --cluster create`` refuses fewer masters."""


class RedisTarget:
    """A running Redis for the benchmark: ``url`` for ``--redis``, ``worker_args`` for
    the rest of the worker's command line, ``read()`` to snapshot every node."""

    def __init__(self, masters: int = 0) -> None:
        """One node (``masters=0``), or a Redis Cluster of ``masters`` (at least 3)."""
        self.cluster = masters > 0
        self._deployment: RedisServer | RedisClusterSet
        if self.cluster:
            self._deployment = RedisClusterSet(max(CLUSTER_MIN_MASTERS, masters))
        else:
            self._deployment = RedisServer(aof=False)

    def __enter__(self) -> Self:
        self._deployment.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._deployment.__exit__(exc_type, exc, tb)

    @property
    def url(self) -> str:
        return self._deployment.url

    @property
    def node_urls(self) -> list[str]:
        if isinstance(self._deployment, RedisClusterSet):
            return [node.url for node in self._deployment.nodes]
        return [self._deployment.url]

    @property
    def worker_args(self) -> list[str]:
        return ["--redis", self.url, *(["--redis-cluster"] if self.cluster else [])]

    def describe(self) -> str:
        version = self.version()
        if self.cluster:
            return f"a Redis Cluster of {len(self.node_urls)} masters (redis-server {version})"
        return f"redis-server {version}"

    def version(self) -> str:
        with redis.Redis.from_url(self.node_urls[0]) as client:
            return str(client.info("server")["redis_version"])

    def flushall(self) -> None:
        for url in self.node_urls:
            with redis.Redis.from_url(url) as client:
                client.flushall()

    def read(self) -> list[RedisCounters]:
        """One ``INFO`` snapshot of each node, in ``node_urls`` order."""
        snapshots = []
        for url in self.node_urls:
            with redis.Redis.from_url(url) as client:
                snapshots.append(RedisCounters.read(client))
        return snapshots
