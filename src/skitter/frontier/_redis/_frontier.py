"""The Redis frontier: one crawl's task queue shared by any number of workers (SPEC §4).

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
- **Queue kinds.** ``priority`` (a sorted set: higher priority first, FIFO within one),
  ``fifo`` and ``lifo`` (lists; they ignore priority, as scrapy-redis's do). Delayed tasks
  are a sorted set by exetime in every kind.
- **Dupe filter.** Finished tasks' outcomes live in the ``done`` hash (taskid -> state,
  lastcrawltime, itag), which push's recrawl rule reads. The Lua helpers ``seen_get`` and
  ``seen_put`` are the only code touching it: the seam for a Bloom filter on bitmaps.

Redis errors that mean it is unavailable for now (a connection refused while Redis
restarts, OOM, READONLY, MISCONF, LOADING) are raised as ``FrontierUnavailable``, refused
credentials or ACL rights as a ``FatalError`` (see ``_errors``); the client reconnects on
the next call, and the scripts are loaded again on NOSCRIPT. Keys are described in
``_keys.py``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from skitter.exceptions import CodecError, ConfigError, JobStateLost
from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
)
from skitter.frontier._memory import check_request
from skitter.frontier._redis._bloom import RedisBloomFilter
from skitter.frontier._redis._errors import reason_kind, translated
from skitter.frontier._redis._keys import JobKeys
from skitter.frontier._redis._listing import JobListing
from skitter.frontier._redis._lua import TimeSource, check_time_source
from skitter.frontier._redis._scripts import Scripts
from skitter.http import Request
from skitter.http._codec import FORMAT_VERSION, decode_request, encode_request

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript
    from redis.typing import EncodableT

    from skitter._types import StatsSink

__all__ = ["QueueKind", "RedisFrontier"]

QueueKind = Literal["priority", "fifo", "lifo"]
DupeFilter = Literal["exact", "bloom"]
_KINDS = ("priority", "fifo", "lifo")
_MAX_PRIORITY = 2**53  # Lua numbers are doubles: larger priorities would lose their order

logger = logging.getLogger("skitter.frontier.redis")
_encode_batch = msgspec.msgpack.Encoder().encode


def _retry() -> Retry:
    """Resend a command whose connection broke, a few times over about a second.

    After a Redis restart the pooled connections are dead and the first command on each
    fails; resending it on a fresh connection is what makes a restart invisible. Every
    script is safe to run twice if its first reply was lost: a push merges into itself, a
    lost lease expires and is reclaimed, a second ack finds no lease and answers False.
    Longer outages are for the worker to ride out (pause, back off, try again). A restart
    that lost the job's state is not invisible: the epoch is gone (``JobStateLost``).
    """
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)


_IGNORED = PushOutcome.IGNORED


def _never_recrawls(request: Request) -> bool:
    """Once pushed, pushing it again changes nothing unless its priority or exetime
    does: no ``age`` to expire, no ``itag`` to change, no auto-recrawl."""
    return request.age < 0 and request.itag is None and not request.auto_recrawl


def _num(x: float) -> str:
    """A time as Redis and Lua read it back exactly (``repr`` of a float round-trips)."""
    return repr(float(x))


class RedisFrontier(JobListing, Frontier):
    """A project's tasks for one job, in Redis.

    ``redis`` is a URL (the frontier creates the client, with a short retry on broken
    connections, and closes it in ``close``) or a ``redis.asyncio.Redis`` created with
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
        redis: str | Redis,
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
    ) -> None:
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"queue kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        if isinstance(bad_max, bool) or not isinstance(bad_max, int) or bad_max < 0:
            raise ValueError(f"bad_max must be an integer >= 0, got {bad_max!r}")
        if isinstance(redis, str):
            self.client: Redis = Redis.from_url(redis, retry=_retry())
            self._owns_client = True
        else:
            if redis.connection_pool.connection_kwargs.get("decode_responses"):
                raise ConfigError(
                    "the Redis frontier stores bytes: create its client with decode_responses=False"
                )
            self.client = redis
            self._owns_client = False
        self.project = project
        self.job = job
        self.spider = spider
        #: The queue kind; None until the job is opened, for a frontier that takes the
        #: job's own (the dashboard, ``skitter push``, ``skitter job``).
        self.kind: QueueKind | None = kind
        self.keys = JobKeys.for_job(project, job, key_prefix)
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
        self._warned_recrawl = False
        self._scripts = Scripts.register(self.client)
        self._promote_limit = promote_limit
        self._reclaim_batch = reclaim_batch
        self._create = create
        self._bad_max = str(bad_max)
        self.time_source = check_time_source(time_source)
        #: Counts what is moved aside (``frontier/quarantined``); workers set it.
        self.stats = stats
        self._warned: set[str] = set()
        #: The job's epoch once joined (``open_job``), and how: created, joined, adopted.
        self.epoch: str | None = None
        self.opened = ""
        #: Redis's clock minus the caller's, as last seen by a lease or reclaim.
        self._skew = 0.0
        self._token_prefix = uuid.uuid4().hex[:12]
        self._calls = itertools.count()
        if push_cache < 0:
            raise ValueError(f"push_cache must be >= 0, got {push_cache!r}")
        self._push_cache = push_cache
        # acks waiting for the next flush: (now, taskid, token, future)
        self._acks: list[tuple[str, str, str, asyncio.Future[int]]] = []
        self._ack_flusher: asyncio.Task[None] | None = None
        # taskid -> (highest priority, earliest exetime) pushed by this object
        self._pushed: dict[str, tuple[int, float]] = {}

    def __repr__(self) -> str:
        return f"<RedisFrontier {self.keys.tag} kind={self.kind}>"

    @property
    def where(self) -> str:
        """``redis://host:port/db`` of the job (never with credentials), for messages."""
        kwargs = self.client.connection_pool.connection_kwargs
        db = kwargs.get("db", 0)
        if "path" in kwargs:
            return f"unix://{kwargs['path']}?db={db}"
        return f"redis://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{db}"

    def state_lost(self, what: str) -> str:
        """The message of ``JobStateLost`` for this job: ``what`` it has now."""
        return (
            f"job state lost (Redis restarted without persistence?): job {self.job!r} on "
            f"{self.where} {what}"
        )

    def _header(self, now: float) -> list[EncodableT]:
        """The ARGV every script starts with (``lua/_common.lua``)."""
        return [self.time_source, _num(now), self.kind or "", self.epoch or "", self._bad_max]

    # -- the job ----------------------------------------------------------------------------
    @translated
    async def open_job(self, create: bool | None = None) -> bool:
        """Join the job, creating it if it has no epoch yet and ``create`` (default: the
        constructor's): True if this call created it. ``JobStateLost`` when it does not
        exist and is not to be created, or when this frontier had joined it before and
        its epoch has gone or changed since (then it is never created again here)."""
        return await self._open(self._create if create is None else create)

    async def _open(self, create: bool) -> bool:
        known = self.epoch
        args: list[EncodableT] = [
            *self._header(time.time()),
            "1" if create and known is None else "0",
        ]
        args += [uuid.uuid4().hex, FORMAT_VERSION]
        raw_epoch, how, kind = await self._scripts.open(self._keys, args)
        epoch, how = raw_epoch.decode(), how.decode()
        self.kind = kind.decode()
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

    def _quarantined(self, aside: Sequence[bytes], reason: str | None = None) -> None:
        """Count what a script moved aside (flat field, reason pairs, or one field with
        ``reason``) and log each kind of reason once: a hostile writer must not flood
        the log, and the bad hash keeps the details (of the newest ``bad_max``)."""
        if reason is not None:
            pairs: list[tuple[bytes, bytes | str]] = [(aside[0], reason)]
        else:
            pairs = list(zip(aside[::2], aside[1::2], strict=True))
        for field, why in pairs:
            text = why if isinstance(why, str) else why.decode("utf-8", "replace")
            if self.stats is not None:
                self.stats.inc("frontier/quarantined")
            kind = reason_kind(text)
            if kind in self._warned:
                logger.debug("%r: moved %r aside: %s", self, field, text)
                continue
            self._warned.add(kind)
            logger.warning(
                "%r: moved %r aside, never run: %s (logged once per reason; the job's bad "
                "hash keeps the latest)",
                self,
                field,
                text,
            )

    def _warn_recrawl(self, request: Request) -> None:
        if request.age >= 0 or request.itag is not None:
            self._warned_recrawl = True
            logger.warning(
                "%r: the Bloom filter keeps no crawl times or itags, so a finished task is "
                "not recrawled for its age or a new itag (%s); forced requests still are. "
                "Use REDIS_DUPEFILTER='exact' to recrawl by age or itag.",
                self,
                request,
            )

    async def dupefilter_stats(self) -> dict[str, float]:
        """The Bloom filter's fill, for the crawl's stats: fingerprints added, the
        false-positive rate expected at that count, and its bitmap's size."""
        if self.bloom is None:
            return {}
        count = await self.bloom.count()
        shape = self.bloom.shape
        return {
            "dupefilter/bloom/count": count,
            "dupefilter/bloom/false_positive_rate": shape.false_positive_rate(count),
            "dupefilter/bloom/memory_bytes": shape.memory_bytes,
        }

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
        pushed = self._pushed if self._push_cache else None
        # Every request is checked and encoded first: a bad one changes nothing.
        for i, request in enumerate(requests):
            check_request(request)
            priority = int(request.priority)
            if not -_MAX_PRIORITY < priority < _MAX_PRIORITY:
                raise ValueError(f"priority of {request!r} is out of range: {priority}")
            if not (math.isfinite(request.exetime) and math.isfinite(request.age)):
                raise ValueError(f"exetime and age of {request!r} must be finite numbers")
            if pushed is not None and (force is None or not force[i]):
                known = pushed.get(request.taskid)
                if (
                    known is not None
                    and priority <= known[0]
                    and request.exetime >= known[1]
                    and _never_recrawls(request)
                ):
                    pushed[request.taskid] = pushed.pop(request.taskid)  # recently used
                    continue
            if self.bloom is not None and not self._warned_recrawl:
                self._warn_recrawl(request)
            sent.append(i)
            batch.append(
                [
                    request.taskid,
                    priority,
                    float(request.exetime),
                    request.itag if request.itag is not None else False,
                    float(request.age),
                    bool(request.auto_recrawl),
                    bool(force[i]) if force is not None else False,
                    request.url,
                ]
            )
            payloads.append(encode_request(request, self.spider))
        if not sent:
            return outcomes
        args: list[EncodableT] = [*self._header(now), _encode_batch(batch), *payloads]
        answers, aside = await self._scripts.push(self._keys, args)
        if aside:
            self._quarantined(aside)
        for i, answer in zip(sent, answers, strict=True):
            outcomes[i] = PushOutcome(answer)
        if pushed is not None:
            self._remember(requests[i] for i in sent)
        return outcomes

    def _remember(self, requests: Iterable[Request]) -> None:
        """Note what Redis now holds for these taskids (see ``push_cache``); the least
        recently used tenth is forgotten when the cache is full."""
        pushed = self._pushed
        for request in requests:
            if not _never_recrawls(request):
                continue
            taskid, priority, exetime = request.taskid, int(request.priority), request.exetime
            known = pushed.pop(taskid, None)
            if known is not None:
                priority, exetime = max(priority, known[0]), min(exetime, known[1])
            pushed[taskid] = (priority, exetime)
        if len(pushed) > self._push_cache:
            for taskid in list(itertools.islice(pushed, len(pushed) - self._push_cache * 9 // 10)):
                del pushed[taskid]

    # -- leases ---------------------------------------------------------------------------
    @translated
    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        await self._ready()
        deadline = now + lease_seconds
        token = f"{self._token_prefix}.{next(self._calls)}"
        leases: list[Lease] = []
        while len(leases) < limit:
            want = limit - len(leases)
            args: list[EncodableT] = [*self._header(now), _num(lease_seconds), want, owner, token]
            args.append(self._promote_limit)
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
        done = asyncio.get_running_loop().create_future()
        self._acks.append((_num(now), lease.taskid, lease.token, done))
        if self._ack_flusher is None or self._ack_flusher.done():
            self._ack_flusher = asyncio.create_task(self._flush_acks())
        return bool(await done)

    async def _flush_acks(self) -> None:
        await asyncio.sleep(0)  # let the acks of this turn of the loop join
        while self._acks:
            batch, self._acks = self._acks, []
            args = self._header(float(batch[-1][0]))
            for now, taskid, token, _ in batch:
                args += (now, taskid, token)
            try:
                answers = await self._scripts.ack(self._keys, args)
            except asyncio.CancelledError:
                for *_, done in batch:
                    done.cancel()
                raise
            except Exception as exc:  # each waiting ack raises it (Redis down...)
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            for (*_, done), answer in zip(batch, answers, strict=True):
                if not done.done():
                    done.set_result(answer)

    @translated
    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        retry = "" if retry_at is None else _num(retry_at)
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
        args = [*self._header(now), _num(lease_seconds)]
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

    # -- queries --------------------------------------------------------------------------
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
        if self._ack_flusher is not None:
            await asyncio.gather(self._ack_flusher, return_exceptions=True)
        if self._owns_client:
            await self.client.aclose()
