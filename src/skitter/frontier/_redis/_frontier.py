"""The Redis frontier: one crawl's task queue shared by any number of workers.

``RedisFrontier`` keeps the ``Frontier`` contract exactly as ``MemoryFrontier`` does
(the same contract suite runs on both), with the state in Redis so that workers on many
machines share one crawl and a killed worker loses nothing:

- **Atomic changes.** Every change is one Lua script (``lua/*.lua``), so two workers never
  lease the same task and a crash between two commands cannot exist. Each method is one
  round trip (EVALSHA): a whole batch of pushes, a whole batch of leases; acks made in
  the same turn of the event loop go together. (The first call also joins the job:
  one round trip more, once.)
- **One clock.** Lease deadlines, reclaims and every other decision use Redis's own
  ``TIME`` inside the scripts, never a worker's clock: a worker whose clock runs ahead
  cannot reclaim a live lease. Times a caller computes from its own clock (an exetime,
  a retry time) are moved onto Redis's by the difference of the two clocks at the call.
  ``time_source="caller"`` lets tests drive time with plain numbers instead.
- **Fencing by lease.** Each lease call has a token; the ``Lease`` carries it, and ack,
  nack, renew and mark_bad must present it. Once a lease expired and was reclaimed (and
  maybe re-leased to another worker, or to this same one), its old holder is refused,
  so a task is never completed twice and a stale run never settles a newer one.
- **The job's epoch.** A random token written into ``P:meta`` when the job is created
  (``open_job``); every script checks it, and one that finds it missing (Redis restarted
  without persistence, FLUSHDB, eviction, failover to an empty replica) or changed (the
  job flushed and created again) changes nothing: the frontier raises ``JobStateLost``,
  a ``FatalError``, so the crawl fails instead of finishing on what little was left.
- **Safe payloads, checked records.** Requests are stored with ``skitter.http._codec``
  (versioned msgpack, callbacks by name, never pickle). Anyone who can write to the Redis
  can put bytes in the queue: every record, payload and finished outcome is checked
  (types, finite numbers in range, known states) before use, in Lua and in Python. An
  entry that cannot be used is moved to the ``bad`` hash with the reason (bounded by
  ``bad_max``; the oldest go first, counted in ``P:meta``), counted in the stats
  (``frontier/quarantined``) and logged once per reason; the crawl goes on with the
  valid tasks. A payload that does not decode, or names a callback the spider lacks, is
  marked BAD (never run; ``requeue_bad`` queues it again once the code is fixed).
- **Queue kinds.** ``priority`` (higher first, FIFO within one), ``fifo`` and ``lifo``
  (lists, ignoring priority as scrapy-redis's do); delayed tasks by exetime in every kind.
- **Dupe filter.** Finished tasks' outcomes are in the ``done`` hash, read by push's
  recrawl rule through the Lua helpers ``seen_get``/``seen_put`` only (or a Bloom filter).

Redis unavailable for now (restarting, OOM, READONLY, MISCONF, LOADING) raises
``FrontierUnavailable``, refused credentials or ACL rights a ``FatalError``
(``_errors``); the client reconnects on the next call and reloads scripts on NOSCRIPT.
Keys are described in ``skitter.redis``'s ``_keys.py``.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from redis.asyncio import Redis

from skitter.exceptions import CodecError, JobStateLost
from skitter.frontier._base import (
    Frontier,
    Lease,
    PushOutcome,
)
from skitter.frontier._redis._acks import AckBatcher
from skitter.frontier._redis._bloom import RedisBloomFilter
from skitter.frontier._redis._listing import JobListing
from skitter.frontier._redis._push import PushCache, push_row
from skitter.frontier._redis._quarantine import Quarantine
from skitter.frontier._redis._scripts import Scripts
from skitter.http import Request
from skitter.http.wiring import FORMAT_VERSION, decode_request, encode_request
from skitter.redis import (
    JobKeys,
    RedisTarget,
    TimeSource,
    bytes_client,
    check_time_source,
    describe,
    lua_number,
    replica_wait,
    replicated,
    translated,
)

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript
    from redis.typing import EncodableT

    from skitter._types import StatsSink

__all__ = ["QueueKind", "RedisFrontier"]

QueueKind = Literal["priority", "fifo", "lifo"]
DupeFilter = Literal["exact", "bloom"]
_KINDS = ("priority", "fifo", "lifo")

_encode_batch = msgspec.msgpack.Encoder().encode
_IGNORED = PushOutcome.IGNORED


class RedisFrontier(JobListing, Frontier):
    """A project's tasks for one job, in Redis.

    ``redis`` is a URL or a ``RedisTarget`` (a Cluster, a Sentinel's master: the
    frontier creates the client, with a short retry on broken connections, and closes it
    in ``close``) or a ``redis.asyncio.Redis`` created with
    ``decode_responses=False`` (the caller's to configure and close).
    ``spider`` resolves the callbacks of stored requests by name; ``kind`` is the queue
    kind a new job gets (a job keeps the one it was created with: another is refused;
    None takes the job's own). ``promote_limit`` bounds
    how many due delayed tasks one lease moves to ready, ``reclaim_batch`` how many expired
    leases one script call puts back: both keep each script call short, since Redis runs
    nothing else meanwhile.

    The job is opened on first use (``open_job``): with ``create`` (a worker, a script
    of your own) a job that does not exist yet is created; without it (``skitter push``
    unless ``--create``, the dashboard, ``skitter job``) that is ``JobStateLost``.
    ``bad_max`` bounds the ``bad`` hash (REDIS_BAD_MAX); ``stats`` (set by workers)
    counts what is moved aside; ``time_source`` is whose clock the scripts decide by
    (see the module docstring).

    ``shards`` is the job's number of shards (REDIS_SHARDS: fixed when it is created;
    None takes the job's own), ``shard`` the one held here (``ShardedRedisFrontier``).

    ``push_cache`` (workers set it) is how many taskids this object remembers having
    pushed. Pages link to the same pages over and over; a link this worker already
    pushed, with no higher priority nor earlier exetime than then, cannot change what
    Redis holds (merges only raise the priority and bring the exetime forward; a
    finished task with ``age`` -1 is never recrawled). Such a link is answered IGNORED
    at once, without being encoded or sent. Requests that can recrawl (forced, an
    ``age``, an ``itag``, ``auto_recrawl``) always go to Redis. The answer is exact but
    for the outcome (IGNORED where Redis might have said MERGED): off by default, so the
    contract's outcomes hold.
    """

    def __init__(
        self,
        redis: str | RedisTarget | Redis,
        *,
        project: str,
        job: str,
        spider: object | None = None,
        kind: QueueKind | None = "priority",
        key_prefix: str = "skitter",
        promote_limit: int = 10_000,
        reclaim_batch: int = 1_000,
        push_cache: int = 0,
        dupefilter: DupeFilter = "exact",
        bloom_capacity: int = 10_000_000,
        bloom_error_rate: float = 0.001,
        create: bool = True,
        bad_max: int = 10_000,
        stats: StatsSink | None = None,
        time_source: TimeSource = "redis",
        shards: int | None = 1,
        shard: int = 0,
    ) -> None:
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"queue kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if isinstance(bad_max, bool) or not isinstance(bad_max, int) or bad_max < 0:
            raise ValueError(f"bad_max must be an integer >= 0, got {bad_max!r}")
        self.client, self._owns_client = bytes_client(redis)
        self.project = project
        self.job = job
        self.spider = spider
        #: The queue kind; None until the job is opened, for a frontier that takes the
        #: job's own (the dashboard, ``skitter push``, ``skitter job``).
        self.kind: QueueKind | None = kind
        #: How many shards the job has (None until opened, for a frontier that takes the
        #: job's own); this frontier holds shard ``shard`` (``ShardedRedisFrontier``).
        self.shards = shards
        self.keys = JobKeys.for_job(project, job, key_prefix, shards=shards or 1).shard(shard)
        self._keys = self.keys.all()
        if dupefilter not in ("exact", "bloom"):
            raise ValueError(f"dupefilter must be 'exact' or 'bloom', got {dupefilter!r}")
        #: With ``dupefilter="bloom"``: the filter that holds the successes (its keys come
        #: after the frontier's in every script call).
        self.bloom: RedisBloomFilter | None = None
        if dupefilter == "bloom":
            self.bloom = RedisBloomFilter(
                self.client, self.keys, capacity=bloom_capacity, error_rate=bloom_error_rate
            )
            self._keys += self.bloom.redis_keys
        self._bloom_ready = False
        self._scripts = Scripts.register(self.client)
        self._push = replicated(self.client, self._scripts.push, replica_wait(self.client))
        self._promote_limit = promote_limit
        self._reclaim_batch = reclaim_batch
        self._create = create
        self._bad_max = str(bad_max)
        self.time_source = check_time_source(time_source)
        self._quarantined = Quarantine(self)
        self._quarantined.stats = stats
        #: The job's epoch once joined (``open_job``), and how: created, joined, adopted.
        self.epoch: str | None = None
        self.opened = ""
        #: Redis's clock minus the caller's, as last seen by a lease or reclaim.
        self._skew = 0.0
        #: What every lease token this object hands out starts with (before a dot).
        self.token_prefix = uuid.uuid4().hex[:12]
        self._calls = itertools.count()
        self._pushed = PushCache(push_cache)
        self._acks = AckBatcher(self._send_acks)

    @property
    def stats(self) -> StatsSink | None:
        """Counts what is moved aside (``frontier/quarantined``); workers set it."""
        return self._quarantined.stats

    @stats.setter
    def stats(self, stats: StatsSink | None) -> None:
        self._quarantined.stats = stats

    def __repr__(self) -> str:
        return f"<RedisFrontier {self.keys.tag} kind={self.kind}>"

    @property
    def where(self) -> str:
        """``redis://host:port/db`` of the job (never with credentials), for messages."""
        return describe(self.client)

    def state_lost(self, what: str) -> str:
        """The message of ``JobStateLost`` for this job: ``what`` it has now."""
        return (
            f"job state lost (Redis restarted without persistence?): job {self.job!r} on "
            f"{self.where} {what}"
        )

    def _header(self, now: float) -> list[EncodableT]:
        """The ARGV every script starts with (``lua/_common.lua``)."""
        return [self.time_source, lua_number(now), self.kind or "", self.epoch or "", self._bad_max]

    # -- the job ----------------------------------------------------------------------------
    @translated
    async def open_job(self, create: bool | None = None, now: float | None = None) -> bool:
        """Join the job, creating it if it has no epoch yet and ``create`` (default: the
        constructor's): True if this call created it. ``JobStateLost`` when it does not
        exist and is not to be created, or when this frontier had joined it before and
        its epoch has gone or changed since (then it is never created again here).
        ``now``: the caller's clock (default: the system's)."""
        return await self._open(self._create if create is None else create, now)

    async def _open(self, create: bool, now: float | None = None) -> bool:
        known = self.epoch
        args: list[EncodableT] = [
            *self._header(time.time() if now is None else now),
            "1" if create and known is None else "0",
        ]
        args += [uuid.uuid4().hex, FORMAT_VERSION, "" if self.shards is None else self.shards]
        raw_epoch, how, kind, shards = await self._scripts.open(self._keys, args)
        epoch, how = raw_epoch.decode(), how.decode()
        self.kind = kind.decode()
        if self.shards is None:  # the job's own
            self.shards = int(shards)
            self.keys = self.keys.with_shards(self.shards)
        if how == "absent":
            if known is not None:
                raise JobStateLost(self.state_lost("has no epoch"))
            raise JobStateLost(f"no job {self.job!r} for spider {self.project!r} on {self.where}")
        if known is not None and epoch != known:
            raise JobStateLost(self.state_lost("has a new epoch"))
        self.epoch, self.opened = epoch, how
        return known is None and how == "created"

    async def _ready(self) -> None:
        """Before a script call: the job is joined, and the Bloom filter's shape is in
        Redis (the scripts read it there) and the same as every other worker's."""
        if self.epoch is None:
            await self._open(self._create)
        if self.bloom is not None and not self._bloom_ready:
            await self.bloom.fix_shape()
            self._bloom_ready = True

    async def dupefilter_stats(self) -> dict[str, float]:
        """The Bloom filter's fill, for the crawl's stats: fingerprints added, the
        false-positive rate expected at that count, and its bitmap's size."""
        return {} if self.bloom is None else await self.bloom.stats()

    # -- queueing -------------------------------------------------------------------------
    @translated
    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        if not requests:
            return []
        await self._ready()
        batch: list[list[Any]] = []
        payloads: list[bytes] = []
        outcomes: list[PushOutcome] = [_IGNORED] * len(requests)
        sent: list[int] = []  # indexes of the requests sent to Redis
        pushed = self._pushed or None
        # Every request is checked and encoded first: a bad one changes nothing.
        for i, request in enumerate(requests):
            forced = bool(force[i]) if force is not None else False
            row = push_row(request, forced)
            if pushed is not None and not forced and pushed.covers(request):
                continue
            if self.bloom is not None:
                self.bloom.warn_recrawl(request)
            sent.append(i)
            batch.append(row)
            payloads.append(encode_request(request, self.spider))
        if not sent:
            return outcomes
        args: list[EncodableT] = [*self._header(now), _encode_batch(batch), *payloads]
        answers, aside = await self._push(self._keys, args)
        if aside:
            self._quarantined(aside)
        for i, answer in zip(sent, answers, strict=True):
            outcomes[i] = PushOutcome(answer)
        if pushed is not None:
            pushed.remember(requests[i] for i in sent)
        return outcomes

    # -- leases ---------------------------------------------------------------------------
    @translated
    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        await self._ready()
        deadline = now + lease_seconds
        token = f"{self.token_prefix}.{next(self._calls)}"
        leases: list[Lease] = []
        while len(leases) < limit:
            want = limit - len(leases)
            args: list[EncodableT] = [*self._header(now), lua_number(lease_seconds), want, owner]
            args += (token, self._promote_limit)
            flat, aside, redis_now = await self._scripts.lease(self._keys, args)
            self._skew = float(redis_now) - now
            if aside:
                self._quarantined(aside)
            refused = 0
            for i in range(0, len(flat), 4):
                lease = await self._open_lease(flat[i : i + 4], now, deadline, token)
                if lease is None:
                    refused += 1
                else:
                    leases.append(lease)
            # Only payloads refused here leave a gap to fill; the script already skips the
            # entries it moved aside, and returns fewer than asked when ready runs out.
            if not refused or len(flat) // 4 < want:
                break
        return leases

    async def _open_lease(
        self, fields: list[Any], now: float, deadline: float, token: str
    ) -> Lease | None:
        """The Lease of one leased task, or None if its payload must never run as it is:
        then it is marked BAD (its payload kept, for ``requeue_bad``; a copy in the
        ``bad`` hash), counted and logged."""
        raw_tid, retried, priority, payload = fields
        try:
            taskid = raw_tid.decode()
            request = decode_request(payload, self.spider)
            # the script checked the record: these are integers in range
            request.priority = int(float(priority))  # a merge may have raised it
            return Lease(taskid, request, int(retried), deadline, token)
        except (CodecError, UnicodeDecodeError, ValueError, OverflowError) as exc:
            reason = f"unreadable stored request: {exc}"
        args = [*self._header(now), raw_tid, token, reason, "1"]
        await self._scripts.mark_bad(self._keys, args)
        self._quarantined([raw_tid], reason)
        return None

    async def _finish(self, script: AsyncScript, lease: Lease, now: float, *rest: str) -> bool:
        """Run ``script`` (ARGV: header, taskid, token, *rest) on ``lease``; False at once
        for a lease no Redis frontier handed out."""
        if not lease.token:
            return False
        await self._ready()
        args = [*self._header(now), lease.taskid, lease.token, *rest]
        return bool(await script(self._keys, args))

    @translated
    async def ack(self, lease: Lease, now: float) -> bool:
        """Acks from concurrent tasks share a round trip: each joins the batch that the
        next flush sends (one script call for all of them); while a flush is out, the
        acks that arrive meanwhile wait for the next one."""
        if not lease.token:
            return False
        await self._ready()
        return await self._acks.ack(lua_number(now), lease.taskid, lease.token)

    async def _send_acks(self, now: float, acks: list[Any]) -> list[Any]:
        return list(await self._scripts.ack(self._keys, [*self._header(now), *acks]))

    @translated
    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        retry = "" if retry_at is None else lua_number(retry_at)
        return await self._finish(self._scripts.nack, lease, now, retry, reason)

    @translated
    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        return await self._finish(self._scripts.mark_bad, lease, now, reason, "0")

    @translated
    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        mine = [lease for lease in leases if lease.token]
        if not mine:
            return 0
        await self._ready()
        args = [*self._header(now), lua_number(lease_seconds)]
        for lease in mine:
            args += (lease.taskid, lease.token)
        flags = await self._scripts.renew(self._keys, args)
        renewed = 0
        for lease, flag in zip(mine, flags, strict=True):
            if flag:
                lease.deadline = now + lease_seconds
                renewed += 1
        return renewed

    @translated
    async def reclaim_expired(self, now: float) -> int:
        await self._ready()
        total = 0
        while True:
            args: list[EncodableT] = [*self._header(now), self._reclaim_batch]
            reclaimed, scanned, aside, redis_now = await self._scripts.reclaim(self._keys, args)
            self._skew = float(redis_now) - now
            if aside:
                self._quarantined(aside)
            total += int(reclaimed)
            if int(scanned) < self._reclaim_batch:
                return total

    @translated
    async def drop(self, *, keep_epoch: float | None = None) -> None:
        """Delete every key of this job: queue, states, dupe filter (``flush_on_start``;
        the next call creates the job again, with a new epoch, if ``create``).

        ``keep_epoch`` (seconds) keeps the job's meta, epoch included, that long: for the
        last worker out of a finished job, so that the workers still finishing find a
        cleared job, not a lost one."""
        if keep_epoch is None:
            await self.client.delete(*self._keys)
            self.epoch = None
        else:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(*self._keys[1:])
                pipe.pexpire(self.keys.meta, max(1, int(keep_epoch * 1000)))
                await pipe.execute()
        self._pushed.clear()
        self._bloom_ready = False

    async def close(self) -> None:
        await self._acks.close()
        if self._owns_client:
            await self.client.aclose()
