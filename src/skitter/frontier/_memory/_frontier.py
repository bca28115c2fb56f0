"""``MemoryFrontier``: the thin async shell that makes ``MemoryTaskQueue`` a ``Frontier``."""

from __future__ import annotations

from collections.abc import Sequence

from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._memory._duplicate import plain_duplicate, push_keyed
from skitter.frontier._memory._queue import MemoryTaskQueue
from skitter.frontier._memory._task import check_request
from skitter.http import Request

__all__ = ["MemoryFrontier"]


class MemoryFrontier(Frontier):
    """A ``Frontier`` in this process's memory: fast, and gone when the process ends."""

    def __init__(self, queue: MemoryTaskQueue | None = None) -> None:
        self.queue = queue if queue is not None else MemoryTaskQueue()

    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        keys = [check_request(request) for request in requests]  # all or nothing
        return push_keyed(self.queue, requests, keys, now, force)

    def plain_duplicate(
        self, key: bytes | str, priority: int, age: float, now: float
    ) -> PushOutcome | None:
        return plain_duplicate(self.queue, key, priority, age, now)

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        return self.queue.lease(limit, now, lease_seconds, owner)

    async def ack(self, lease: Lease, now: float) -> bool:
        return self.queue.ack(lease, now)

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        return self.queue.nack(lease, now, retry_at, reason)

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        return self.queue.mark_bad(lease, now, reason)

    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        return self.queue.tasks(state, limit)

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return self.queue.retry_failed(now, domain=domain, reason=reason)

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return self.queue.requeue_bad(now, domain=domain, reason=reason)

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        return self.queue.renew(leases, now, lease_seconds)

    async def reclaim_expired(self, now: float) -> int:
        return self.queue.reclaim_expired(now)

    async def counts(self, now: float) -> FrontierCounts:
        return self.queue.counts(now)

    async def next_due(self) -> float | None:
        return self.queue.next_due()

    async def task(self, taskid: str) -> TaskInfo | None:
        return self.queue.task(taskid)
