"""What people look at in a Redis job, and putting its failed or bad tasks back.

``JobListing`` is the read side of ``RedisFrontier`` (its base class): ``counts``,
``next_due``, ``task``, ``tasks`` (FAILED and BAD, from their time indexes), ``leased``
(the cluster's tasks in flight), ``bad_entries`` (what was moved aside),
``quarantine_counts``, and ``retry_failed``/``requeue_bad``. The dashboard and
``skitter job`` read a job through these. Every value is checked as ``_records`` reads
it: what cannot be read is left out of a listing, never raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skitter.frontier._base import FrontierCounts, TaskInfo, TaskState
from skitter.frontier._redis._records import (
    BadEntry,
    LeasedTask,
    leased_task,
    parse_bad,
    task_info,
)
from skitter.http import in_domain
from skitter.redis import hgetall, hmget, translated, zrange

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from skitter.frontier._redis._bloom import RedisBloomFilter
    from skitter.frontier._redis._scripts import Scripts
    from skitter.redis import JobKeys

__all__ = ["JobListing"]


class JobListing:
    """The read side of a job's frontier (``RedisFrontier`` sets these attributes)."""

    client: Redis
    keys: JobKeys
    bloom: RedisBloomFilter | None
    project: str
    job: str
    _keys: list[str]
    _scripts: Scripts
    _skew: float  # Redis's clock minus the caller's, as last seen

    if TYPE_CHECKING:  # RedisFrontier's

        async def _ready(self) -> None: ...

        def _header(self, now: float) -> list[Any]: ...

        def state_lost(self, what: str) -> str: ...

    @translated
    async def counts(self, now: float) -> FrontierCounts:
        """Tasks ready, delayed and processing; ``JobStateLost`` if the job is gone (a
        lost job must not look finished)."""
        await self._ready()
        ready, delayed, processing = await self._scripts.counts(self._keys, self._header(now))
        return FrontierCounts(int(ready), int(delayed), int(processing))

    @translated
    async def next_due(self) -> float | None:
        """The earliest exetime of a delayed task, on the caller's clock as last seen; an
        entry scored +inf (planted: no exetime is) is never due and is left to reclaim."""
        first = await self.client.zrangebyscore(
            self.keys.delayed, "-inf", "(inf", start=0, num=1, withscores=True
        )
        return float(first[0][1]) - self._skew if first else None

    @translated
    async def task(self, taskid: str) -> TaskInfo | None:
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hget(self.keys.tasks, taskid)
            pipe.hget(self.keys.done, taskid)
            record, done = await pipe.execute()
        info = task_info(taskid, record, done)
        if (
            info is None
            and self.bloom is not None
            and (await self.bloom.contains_many([taskid]))[0]
        ):
            # crawled (or a false positive): the Bloom filter keeps no time or URL
            info = TaskInfo(taskid, "", TaskState.SUCCESS, 0, 0.0, "")
        return info

    @translated
    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        """FAILED or BAD tasks, most recent first, from their time index. SUCCESS is not
        listed: the dupe filter keeps no order, and reading it whole would be a scan.
        Entries that cannot be read are left out."""
        index = {TaskState.FAILED: self.keys.failed, TaskState.BAD: self.keys.bad_tasks}.get(state)
        if index is None:
            raise ValueError(f"the Redis frontier lists FAILED and BAD tasks, not {state.name}")
        if limit <= 0:
            return []
        taskids = await zrange(self.client, index, 0, limit - 1, desc=True)
        if not taskids:
            return []
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hmget(self.keys.tasks, taskids)
            pipe.hmget(self.keys.done, taskids)
            records, done = await pipe.execute()
        found = []
        for raw_tid, record, outcome in zip(taskids, records, done, strict=True):
            info = task_info(raw_tid.decode(errors="replace"), record, outcome)
            if info is not None and info.state is state:
                found.append(info)
        return found

    @translated
    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return await self._requeue(TaskState.FAILED, now, domain, reason)

    @translated
    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return await self._requeue(TaskState.BAD, now, domain, reason)

    async def _requeue(
        self,
        state: TaskState,
        now: float,
        domain: str | None,
        reason: str | None,
        batch: int = 500,
    ) -> int:
        """Queue the tasks of ``state`` matching the filters again, oldest first, a batch
        at a time. The filters are applied here, not in Lua (hosts are parsed as
        everywhere else); the script checks each task again, so one queued by another
        worker meanwhile is left alone. Each batch is run before the next is read: what
        it queued has left the index by then, and only what stayed moves the offset."""
        await self._ready()
        index = self.keys.failed if state is TaskState.FAILED else self.keys.bad_tasks
        offset = queued = 0
        while True:
            taskids = await zrange(self.client, index, offset, offset + batch - 1)
            if not taskids:
                if not offset and not queued:  # nothing to queue: still, the job must be there
                    await self._scripts.requeue(self._keys, [*self._header(now), int(state)])
                return queued
            outcomes = await hmget(self.client, self.keys.done, taskids)
            chosen = []
            for tid, outcome in zip(taskids, outcomes, strict=True):
                info = task_info("", None, outcome) if outcome is not None else None
                if info is None or info.state is not state:
                    chosen.append(tid)  # stale: the script drops it from the index
                elif (domain is None or in_domain(info.url, domain)) and (
                    reason is None or reason in info.reason
                ):
                    chosen.append(tid)
            stayed = len(taskids) - len(chosen)
            if chosen:
                args = [*self._header(now), int(state), *chosen]
                done, kept = await self._scripts.requeue(self._keys, args)
                queued += int(done)
                stayed += int(kept)
            offset += stayed
            if len(taskids) < batch:
                return queued

    @translated
    async def leased(self, limit: int = 100) -> list[LeasedTask]:
        """Tasks in flight in the whole cluster, the soonest lease deadline first."""
        if limit <= 0:
            return []
        entries = await zrange(self.client, self.keys.processing, 0, limit - 1)
        if not entries:
            return []
        taskids = [entry[16:] for entry in entries]
        records = await hmget(self.client, self.keys.tasks, taskids)
        found = []
        for tid, record in zip(taskids, records, strict=True):
            lease = leased_task(tid.decode(errors="replace"), record)
            if lease is not None:
                found.append(lease)
        return found

    @translated
    async def bad_entries(self) -> list[BadEntry]:
        """What was moved aside as unreadable or unsafe, for a human to look at (the
        newest ``bad_max``)."""
        entries = await hgetall(self.client, self.keys.bad)
        return sorted((parse_bad(k, v) for k, v in entries.items()), key=lambda e: e.time)

    @translated
    async def finished_counts(self) -> tuple[int, int, int]:
        """Tasks FAILED, tasks BAD, and entries kept in the ``bad`` hash."""
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.zcard(self.keys.failed)
            pipe.zcard(self.keys.bad_tasks)
            pipe.hlen(self.keys.bad)
            failed, bad, kept = await pipe.execute()
        return int(failed), int(bad), int(kept)

    @translated
    async def quarantine_counts(self) -> tuple[int, int]:
        """How many entries were ever moved aside, and how many of those the bounded
        ``bad`` hash has dropped since (the oldest first)."""
        moved, dropped = await self.client.hmget(self.keys.meta, "quarantined", "bad_dropped")
        return int(moved or 0), int(dropped or 0)
