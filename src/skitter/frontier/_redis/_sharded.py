"""A job's frontier split by host over N shards (REDIS_SHARDS, ``--shards N``).

One Redis node runs every script of a job on one core and holds the whole queue in its
memory; past that, ``ShardedRedisFrontier`` splits the job into N ``RedisFrontier``
shards, each under its own hash tag (``skitter.redis.JobKeys``): on a Redis Cluster the
shards sit on different slots, spread evenly over the masters, so N masters share the
scripts' work and the memory. Why shards by host rather than a hash tag per host: a worker must find
due tasks without asking every host's queue, and the slot's politeness (permits, pace,
robots.txt) must stay in the same script as the queue of its host; N queues, each a
whole frontier, keep both, and Redis Cluster already routes, moves slots and fails over.

- **By host.** A request goes to the shard of its URL's host (``JobKeys.shard_of``); so do
  its slot's permits and pace and its origin's robots.txt. A taskid is unique within its
  host's shard: two URLs of different hosts given the same custom taskid are two tasks.
- **Leases in turn.** Each ``lease`` starts at the next shard and takes what that shard
  has due, then the next, until it has ``limit``: every shard is served, none starves.
  Priority order holds within a shard (within a host, always); across shards, leases
  alternate. Acks, nacks and renewals go to the shard that handed the lease out (its
  fencing token names it).
- **One job.** Shard 0 is the job's own keys: its meta holds the epoch and the number of
  shards, fixed when the job is created (a worker given another number is refused), and
  the epoch of every other shard as it joined. A shard found with another epoch later
  (its node restarted empty and a worker created it again) is ``JobStateLost``, as a lost
  single-node job is: the crawl fails instead of finishing on part of its queue.
- **Reads** (counts, listings, retry_failed) ask every shard, concurrently, and merge.

With one shard this is a thin layer over one ``RedisFrontier``: the dashboard, ``skitter
push`` and ``skitter job`` use it with ``shards=None`` (the job's own number).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from skitter.exceptions import FrontierUnavailable, JobStateLost
from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._redis._frontier import RedisFrontier
from skitter.frontier._redis._push import push_row
from skitter.http import Request, url_host
from skitter.redis import RedisTarget, bytes_client, describe, translated

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from skitter._types import StatsSink
    from skitter.frontier._redis._records import BadEntry, LeasedTask
    from skitter.redis import JobKeys

__all__ = ["ShardedRedisFrontier"]

T = TypeVar("T")


class ShardedRedisFrontier(Frontier):
    """A job's tasks in ``shards`` Redis shards (None: the job's own number, learned
    when it is opened). Every other argument is ``RedisFrontier``'s, for each shard;
    ``bloom_capacity`` is the whole job's, divided among the shards."""

    def __init__(
        self,
        redis: str | RedisTarget | Redis,
        *,
        project: str,
        job: str,
        shards: int | None = 1,
        bloom_capacity: int = 10_000_000,
        create: bool = True,
        **options: Any,
    ) -> None:
        if shards is not None and (
            isinstance(shards, bool) or not isinstance(shards, int) or shards < 1
        ):
            raise ValueError(f"shards must be an integer >= 1, got {shards!r}")
        self.client, self._owns_client = bytes_client(redis)
        self.project, self.job = project, job
        self._create = create
        self._options = {"project": project, "job": job, "create": create, **options}
        self._bloom_capacity = bloom_capacity
        self._wanted = shards
        self._parts: list[RedisFrontier] = [self._part(0, shards)]
        if shards is not None:
            self._parts += [self._part(k, shards) for k in range(1, shards)]
        self._joined = False
        self._joining = asyncio.Lock()
        self._turn = itertools.count()
        self._stats: StatsSink | None = None

    def _part(self, index: int, shards: int | None) -> RedisFrontier:
        capacity = -(-self._bloom_capacity // (shards or 1))
        return RedisFrontier(
            self.client, shards=shards, shard=index, bloom_capacity=capacity, **self._options
        )

    def __repr__(self) -> str:
        return f"<ShardedRedisFrontier {self.keys.tag} shards={self.shards}>"

    # -- what the cluster services and the dashboard read ----------------------------------
    @property
    def parts(self) -> list[RedisFrontier]:
        """The shards' frontiers, shard 0 first (all of them once the job is open)."""
        return self._parts

    @property
    def shards(self) -> int | None:
        return self._parts[0].shards

    @property
    def keys(self) -> JobKeys:
        """Shard 0's keys: the job's own, which name every shard's slot keys too."""
        return self._parts[0].keys

    @property
    def kind(self) -> str | None:
        return self._parts[0].kind

    @property
    def epoch(self) -> str | None:
        return self._parts[0].epoch

    @property
    def opened(self) -> str:
        return self._parts[0].opened

    @property
    def where(self) -> str:
        return describe(self.client)

    @property
    def stats(self) -> StatsSink | None:
        return self._stats

    @stats.setter
    def stats(self, stats: StatsSink | None) -> None:
        self._stats = stats
        for part in self._parts:
            part.stats = stats

    # -- the job ----------------------------------------------------------------------------
    @translated
    async def open_job(self, create: bool | None = None, now: float | None = None) -> bool:
        """Join the job (every shard), creating it if ``create`` (default: the
        constructor's): True if this call created it. See ``RedisFrontier.open_job``."""
        async with self._joining:
            return await self._open(self._create if create is None else create, now)

    async def _open(self, create: bool, now: float | None = None) -> bool:
        first = self._parts[0]
        created = await first.open_job(create, now)
        count = first.shards
        assert count is not None  # opening learns it
        if len(self._parts) != count:
            self._parts[1:] = [self._part(k, count) for k in range(1, count)]
            self.stats = self._stats
        for index, part in enumerate(self._parts[1:], start=1):
            await part.open_job(create, now)
            await self._check_shard_epoch(index, part)
        self._joined = True
        return created

    async def _check_shard_epoch(self, index: int, part: RedisFrontier) -> None:
        """Shard 0 records each shard's epoch when it first joins; another one later
        means the shard's state was lost and made again."""
        field = f"shard_epoch:{index}"
        meta = self.keys.meta
        await self.client.hsetnx(meta, field, part.epoch or "")
        recorded = await self.client.hget(meta, field)
        if isinstance(recorded, bytes) and recorded.decode() != part.epoch:
            raise JobStateLost(part.state_lost(f"has a new epoch on shard {index}"))

    def forget(self) -> None:
        """Look at the job afresh at the next call (the dashboard, after the job's state
        was lost: a new run may start it again)."""
        self._joined = False
        for part in self._parts:
            part.epoch = None
        if self._wanted is None:  # made again, the job may have another number of shards
            self._parts[0].shards = None

    def state_lost(self, what: str) -> str:
        return self._parts[0].state_lost(what)

    @translated
    async def _ready(self) -> None:
        if not self._joined:
            async with self._joining:
                if not self._joined:
                    await self._open(self._create)

    def _of(self, request: Request) -> RedisFrontier:
        return self._parts[self.keys.shard_of(url_host(request.url))]

    def _holder(self, lease: Lease) -> RedisFrontier | None:
        prefix = lease.token.partition(".")[0]
        for part in self._parts:
            if part.token_prefix == prefix:
                return part
        return None

    async def _each(self, call: Callable[[RedisFrontier], Awaitable[T]]) -> list[T]:
        """``call`` on every shard, concurrently."""
        await self._ready()
        if len(self._parts) == 1:
            return [await call(self._parts[0])]
        return list(await asyncio.gather(*(call(part) for part in self._parts)))

    # -- queueing and leases -----------------------------------------------------------------
    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        await self._ready()
        if len(self._parts) == 1:
            return await self._parts[0].push(requests, now, force=force)
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        groups: dict[int, list[int]] = {}
        shard_of = self.keys.shard_of
        for i, request in enumerate(requests):
            push_row(request, False)  # a bad request raises before any shard is sent to
            groups.setdefault(shard_of(url_host(request.url)), []).append(i)
        outcomes: list[PushOutcome] = [PushOutcome.IGNORED] * len(requests)

        async def send(index: int, members: list[int]) -> None:
            flags = None if force is None else [force[i] for i in members]
            batch = [requests[i] for i in members]
            answers = await self._parts[index].push(batch, now, force=flags)
            for i, answer in zip(members, answers, strict=True):
                outcomes[i] = answer

        await asyncio.gather(*(send(index, members) for index, members in groups.items()))
        return outcomes

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        await self._ready()
        count = len(self._parts)
        start = next(self._turn) % count
        leases: list[Lease] = []
        for step in range(count):
            if len(leases) >= limit:
                break
            part = self._parts[(start + step) % count]
            try:
                leases += await part.lease(limit - len(leases), now, lease_seconds, owner)
            except FrontierUnavailable:
                if not leases:
                    raise
                break  # what the other shards leased runs now; this one is asked again
        return leases

    async def ack(self, lease: Lease, now: float) -> bool:
        part = self._holder(lease)
        return part is not None and await part.ack(lease, now)

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        part = self._holder(lease)
        return part is not None and await part.nack(lease, now, retry_at, reason)

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        part = self._holder(lease)
        return part is not None and await part.mark_bad(lease, now, reason)

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        groups: dict[int, list[Lease]] = {}
        for lease in leases:
            part = self._holder(lease)
            if part is not None:
                groups.setdefault(self._parts.index(part), []).append(lease)
        renewed = 0
        for index, mine in groups.items():
            renewed += await self._parts[index].renew(mine, now, lease_seconds)
        return renewed

    async def reclaim_expired(self, now: float) -> int:
        return sum(await self._each(lambda part: part.reclaim_expired(now)))

    # -- reads ------------------------------------------------------------------------------
    async def counts(self, now: float) -> FrontierCounts:
        found = await self._each(lambda part: part.counts(now))
        return FrontierCounts(
            sum(c.ready for c in found),
            sum(c.delayed for c in found),
            sum(c.processing for c in found),
        )

    async def next_due(self) -> float | None:
        due = [t for t in await self._each(lambda part: part.next_due()) if t is not None]
        return min(due) if due else None

    async def task(self, taskid: str) -> TaskInfo | None:
        found = [i for i in await self._each(lambda part: part.task(taskid)) if i is not None]
        if not found:
            return None
        # the same taskid on two hosts (a custom taskid): the queued one, else the latest
        return max(found, key=lambda i: (i.state is TaskState.ACTIVE, i.lastcrawltime))

    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        found = await self._each(lambda part: part.tasks(state, limit))
        merged = heapq.merge(*found, key=lambda i: -i.lastcrawltime)
        return list(itertools.islice(merged, max(0, limit)))

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        calls = self._each(lambda part: part.retry_failed(now, domain=domain, reason=reason))
        return sum(await calls)

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        calls = self._each(lambda part: part.requeue_bad(now, domain=domain, reason=reason))
        return sum(await calls)

    async def leased(self, limit: int = 100) -> list[LeasedTask]:
        found = await self._each(lambda part: part.leased(limit))
        merged = heapq.merge(*found, key=lambda lease: lease.deadline)
        return list(itertools.islice(merged, max(0, limit)))

    async def bad_entries(self) -> list[BadEntry]:
        found = await self._each(lambda part: part.bad_entries())
        return sorted((e for entries in found for e in entries), key=lambda e: e.time)

    async def quarantine_counts(self) -> tuple[int, int]:
        found = await self._each(lambda part: part.quarantine_counts())
        return sum(moved for moved, _ in found), sum(dropped for _, dropped in found)

    async def finished_counts(self) -> tuple[int, int, int]:
        """Tasks FAILED, BAD, and entries kept in the ``bad`` hashes, in every shard."""
        found = await self._each(lambda part: part.finished_counts())
        return (sum(f[0] for f in found), sum(f[1] for f in found), sum(f[2] for f in found))

    async def dupefilter_stats(self) -> dict[str, float]:
        """The Bloom filters' fill, all shards together (the false-positive rate is the
        worst shard's)."""
        totals: dict[str, float] = {}
        for stats in await self._each(lambda part: part.dupefilter_stats()):
            for name, value in stats.items():
                merge = max if name.endswith("false_positive_rate") else _add
                totals[name] = merge(totals.get(name, 0.0), value)
        return totals

    # -- the end ----------------------------------------------------------------------------
    async def drop(self, *, keep_epoch: float | None = None) -> None:
        """Delete every key of the job in every shard (``RedisFrontier.drop``), shard 0
        (with the job's epoch and the shards' record) last."""
        for part in reversed(self._parts):
            await part.drop(keep_epoch=keep_epoch)
        self._joined = False

    async def close(self) -> None:
        for part in self._parts:
            await part.close()
        if self._owns_client:
            await self.client.aclose()


def _add(a: float, b: float) -> float:
    return a + b
