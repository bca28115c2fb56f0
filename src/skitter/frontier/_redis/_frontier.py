"""The Redis frontier: one crawl's task queue shared by any number of workers (SPEC §4).

``RedisFrontier`` keeps the ``Frontier`` contract exactly as ``MemoryFrontier`` does
(the same contract suite runs on both), with the state in Redis so that workers on many
machines share one crawl and a killed worker loses nothing:

- **Atomic changes.** Every change is one Lua script (``lua/*.lua``), so two workers never
  lease the same task and a crash between two commands cannot exist. Each method is one
  round trip (EVALSHA): a whole batch of pushes, a whole batch of leases; acks made in
  the same turn of the event loop go together.
- **Fencing.** A lease carries the owner and a token unique to the lease call. Only the
  frontier object that leased a task can ack, nack, renew or mark it bad, and only while
  its lease is current: once it expired and was reclaimed (and maybe re-leased to another
  worker), the old holder is refused, so a task is never completed twice. A refusal for a
  task this object never leased costs no round trip.
- **Safe payloads.** Requests are stored with ``skitter.http._codec`` (versioned msgpack,
  callbacks by name, never pickle). Anyone who can write to the Redis can put bytes in
  the queue; an entry that cannot be read, or names a callback the spider lacks (say
  ``__init__``), is moved to the ``bad`` hash with the reason and logged, never run.
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
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ResponseError

from skitter.exceptions import CodecError, ConfigError
from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.frontier._memory import check_request
from skitter.frontier._redis._bloom import RedisBloomFilter
from skitter.frontier._redis._errors import translating
from skitter.frontier._redis._keys import JobKeys
from skitter.frontier._redis._records import (
    BadEntry,
    LeasedTask,
    leased_task,
    parse_bad,
    task_info,
)
from skitter.frontier._redis._scripts import Scripts
from skitter.http import Request, in_domain
from skitter.http._codec import FORMAT_VERSION, decode_request, encode_request

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

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
    Longer outages are for the worker to ride out (pause, back off, try again).
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


#: Redis out of reach, out of memory, read-only... as ``FrontierUnavailable`` (which the
#: engine rides out), refused credentials as a ``FatalError``: see ``_errors``.
_translated = translating(lambda self: f"Redis for {self.project}/{self.job}")


class RedisFrontier(Frontier):
    """A project's tasks for one job, in Redis.

    ``redis`` is a URL (the frontier creates the client, with a short retry on broken
    connections, and closes it in ``close``) or a ``redis.asyncio.Redis`` created with
    ``decode_responses=False`` (the caller's to configure and close).
    ``spider`` resolves the callbacks of stored requests by name. ``promote_limit`` bounds
    how many due delayed tasks one lease moves to ready, ``reclaim_batch`` how many expired
    leases one script call puts back: both keep each script call short, since Redis runs
    nothing else meanwhile.

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
        kind: QueueKind = "priority",
        key_prefix: str = "skitter",
        promote_limit: int = 10_000,
        reclaim_batch: int = 1_000,
        push_cache: int = 0,
        dupefilter: DupeFilter = "exact",
        bloom_capacity: int = 10_000_000,
        bloom_error_rate: float = 0.001,
    ) -> None:
        if kind not in _KINDS:
            raise ValueError(f"queue kind must be one of {', '.join(_KINDS)}, got {kind!r}")
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
        self.kind: QueueKind = kind
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
        # (taskid, owner) -> token of the lease this object holds on it
        self._tokens: dict[tuple[str, str], str] = {}
        self._token_prefix = uuid.uuid4().hex[:12]
        self._calls = itertools.count()
        if push_cache < 0:
            raise ValueError(f"push_cache must be >= 0, got {push_cache!r}")
        self._push_cache = push_cache
        # acks waiting for the next flush: (now, taskid, owner, token, future)
        self._acks: list[tuple[str, str, str, str, asyncio.Future[int]]] = []
        self._ack_flusher: asyncio.Task[None] | None = None
        # taskid -> (highest priority, earliest exetime) pushed by this object
        self._pushed: dict[str, tuple[int, float]] = {}

    def __repr__(self) -> str:
        return f"<RedisFrontier {self.keys.meta.rsplit(':', 1)[0]} kind={self.kind}>"

    async def _ready(self) -> None:
        """Before the first script call: the Bloom filter's shape must be in Redis (the
        scripts read it there), and the same as every other worker's."""
        if self.bloom is not None and not self._bloom_ready:
            await self.bloom.fix_shape()
            self._bloom_ready = True

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
    @_translated
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
        args = [self.kind, _num(now), _encode_batch(batch), FORMAT_VERSION, *payloads]
        try:
            answers = await self._scripts.push(self._keys, args)
        except ResponseError as exc:
            if "skitter:" in str(exc):
                raise ConfigError(f"{self!r}: {exc}") from None
            raise
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
    @_translated
    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        await self._ready()
        deadline = now + lease_seconds
        token = f"{self._token_prefix}.{next(self._calls)}"
        leases: list[Lease] = []
        while len(leases) < limit:
            want = limit - len(leases)
            args = [self.kind, _num(now), _num(deadline), want, owner, token, self._promote_limit]
            flat, aside = await self._scripts.lease(self._keys, args)
            for i in range(0, len(aside), 2):
                logger.warning(
                    "%r: moved queue entry %r aside: %s", self, aside[i], aside[i + 1].decode()
                )
            refused = 0
            for i in range(0, len(flat), 4):
                lease = await self._open(flat[i : i + 4], now, deadline, owner, token)
                if lease is None:
                    refused += 1
                else:
                    leases.append(lease)
            # Only payloads refused here leave a gap to fill; the script already skips the
            # entries it moved aside, and returns fewer than asked when ready runs out.
            if not refused or len(flat) // 4 < want:
                break
        return leases

    async def _open(
        self, fields: list[Any], now: float, deadline: float, owner: str, token: str
    ) -> Lease | None:
        """The Lease of one leased task, or None if its payload must never run: then it is
        marked BAD, its bytes kept in the ``bad`` hash, and the reason logged."""
        raw_tid, retried, priority, payload = fields
        try:
            taskid = raw_tid.decode()
            request = decode_request(payload, self.spider)
        except (CodecError, UnicodeDecodeError) as exc:
            reason = f"unreadable stored request: {exc}"
            logger.warning("%r: task %r marked BAD, never run: %s", self, raw_tid, reason)
            args = [self.kind, _num(now), raw_tid, owner, token, reason, "1"]
            await self._scripts.mark_bad(self._keys, args)
            return None
        request.priority = int(float(priority))  # a merge may have raised it
        self._tokens[(taskid, owner)] = token
        return Lease(taskid, request, int(retried), deadline)

    async def _finish(
        self, script: AsyncScript, taskid: str, now: float, owner: str, *rest: str
    ) -> bool:
        """Run ``script`` (ARGV: kind, now, taskid, owner, token, *rest) on the lease this
        object holds on ``taskid``; False at once if it holds none."""
        token = self._tokens.get((taskid, owner))
        if token is None:
            return False
        done = await script(self._keys, [self.kind, _num(now), taskid, owner, token, *rest])
        # Whatever the answer, the lease is over: refused means it was taken away.
        self._tokens.pop((taskid, owner), None)
        return bool(done)

    @_translated
    async def ack(self, taskid: str, now: float, owner: str = "") -> bool:
        """Acks from concurrent tasks share a round trip: each joins the batch that the
        next flush sends (one script call for all of them); while a flush is out, the
        acks that arrive meanwhile wait for the next one."""
        token = self._tokens.pop((taskid, owner), None)
        if token is None:
            return False
        done = asyncio.get_running_loop().create_future()
        self._acks.append((_num(now), taskid, owner, token, done))
        if self._ack_flusher is None or self._ack_flusher.done():
            self._ack_flusher = asyncio.create_task(self._flush_acks())
        return bool(await done)

    async def _flush_acks(self) -> None:
        await asyncio.sleep(0)  # let the acks of this turn of the loop join
        while self._acks:
            batch, self._acks = self._acks, []
            args: list[str] = [self.kind]
            for now, taskid, owner, token, _ in batch:
                args += (now, taskid, owner, token)
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

    @_translated
    async def nack(
        self, taskid: str, now: float, retry_at: float | None, reason: str, owner: str = ""
    ) -> bool:
        retry = "" if retry_at is None else _num(retry_at)
        return await self._finish(self._scripts.nack, taskid, now, owner, retry, reason)

    @_translated
    async def mark_bad(self, taskid: str, now: float, reason: str, owner: str = "") -> bool:
        return await self._finish(self._scripts.mark_bad, taskid, now, owner, reason, "0")

    @_translated
    async def renew(
        self, taskids: Sequence[str], now: float, lease_seconds: float, owner: str = ""
    ) -> int:
        pairs: list[str] = []
        for taskid in taskids:
            token = self._tokens.get((taskid, owner))
            if token is not None:
                pairs += (taskid, token)
        if not pairs:
            return 0
        args = [self.kind, _num(now + lease_seconds), owner, *pairs]
        return int(await self._scripts.renew(self._keys, args))

    @_translated
    async def reclaim_expired(self, now: float) -> int:
        total = 0
        while True:
            args = [self.kind, _num(now), self._reclaim_batch]
            reclaimed, scanned = await self._scripts.reclaim(self._keys, args)
            total += int(reclaimed)
            if int(scanned) < self._reclaim_batch:
                return total

    # -- queries --------------------------------------------------------------------------
    @_translated
    async def counts(self, now: float) -> FrontierCounts:
        ready, delayed, processing = await self._scripts.counts(self._keys, [self.kind, _num(now)])
        return FrontierCounts(int(ready), int(delayed), int(processing))

    @_translated
    async def next_due(self) -> float | None:
        first = await self.client.zrange(self.keys.delayed, 0, 0, withscores=True)
        return float(first[0][1]) if first else None

    @_translated
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

    @_translated
    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        """FAILED or BAD tasks, most recent first, from their time index. SUCCESS is not
        listed: the dupe filter keeps no order, and reading it whole would be a scan."""
        index = {TaskState.FAILED: self.keys.failed, TaskState.BAD: self.keys.bad_tasks}.get(state)
        if index is None:
            raise ValueError(f"the Redis frontier lists FAILED and BAD tasks, not {state.name}")
        if limit <= 0:
            return []
        taskids = await self.client.zrange(index, 0, limit - 1, desc=True)
        if not taskids:
            return []
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hmget(self.keys.tasks, taskids)
            pipe.hmget(self.keys.done, taskids)
            records, done = await pipe.execute()
        found = []
        for raw_tid, record, outcome in zip(taskids, records, done, strict=True):
            info = task_info(raw_tid.decode(), record, outcome)
            if info is not None and info.state is state:
                found.append(info)
        return found

    @_translated
    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        queued = 0
        async for taskids in self._failed_matching(domain, reason):
            queued += int(
                await self._scripts.retry_failed(self._keys, [self.kind, _num(now), *taskids])
            )
        return queued

    async def _failed_matching(
        self, domain: str | None, reason: str | None, batch: int = 500
    ) -> AsyncIterator[list[bytes]]:
        """FAILED taskids matching the filters, oldest first, a batch at a time. The
        filters are applied here, not in Lua (hosts are parsed as everywhere else); the
        script checks each task again, so one queued by another worker meanwhile is left
        alone. The caller runs the script on a batch before asking for the next: what it
        chose has left the index by then, and only what it skipped moves the offset."""
        offset = 0
        while True:
            taskids = await self.client.zrange(self.keys.failed, offset, offset + batch - 1)
            if not taskids:
                return
            outcomes = await self.client.hmget(self.keys.done, taskids)
            chosen = []
            for tid, outcome in zip(taskids, outcomes, strict=True):
                info = task_info(tid.decode(), None, outcome) if outcome is not None else None
                if info is None or info.state is not TaskState.FAILED:
                    chosen.append(tid)  # stale: the script drops it from the index
                elif (domain is None or in_domain(info.url, domain)) and (
                    reason is None or reason in info.reason
                ):
                    chosen.append(tid)
            offset += len(taskids) - len(chosen)
            if chosen:
                yield chosen
            if len(taskids) < batch:
                return

    @_translated
    async def leased(self, limit: int = 100) -> list[LeasedTask]:
        """Tasks in flight in the whole cluster, the soonest lease deadline first."""
        if limit <= 0:
            return []
        entries = await self.client.zrange(self.keys.processing, 0, limit - 1)
        if not entries:
            return []
        taskids = [entry[16:] for entry in entries]
        records = await self.client.hmget(self.keys.tasks, taskids)
        found = []
        for tid, record in zip(taskids, records, strict=True):
            lease = leased_task(tid.decode(errors="replace"), record)
            if lease is not None:
                found.append(lease)
        return found

    async def bad_entries(self) -> list[BadEntry]:
        """What was moved aside as unreadable or unsafe, for a human to look at."""
        entries = await self.client.hgetall(self.keys.bad)
        return sorted((parse_bad(k, v) for k, v in entries.items()), key=lambda e: e.time)

    @_translated
    async def drop(self) -> None:
        """Delete every key of this job: queue, states, dupe filter (``flush_on_start``)."""
        await self.client.delete(*self._keys)
        self._tokens.clear()
        self._pushed.clear()
        self._bloom_ready = False

    async def close(self) -> None:
        if self._ack_flusher is not None:
            await asyncio.gather(self._ack_flusher, return_exceptions=True)
        if self._owns_client:
            await self.client.aclose()
