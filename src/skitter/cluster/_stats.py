"""Crawl statistics added up across every worker of a job, in Redis.

``RedisStats`` is a ``StatsSink`` around this worker's own statistics (an
``engine.Stats``, ``local``): ``inc``, ``set`` and ``max`` go to ``local`` and are noted
as pending, a dict update each, so the hot path stays as cheap; ``get``, ``to_dict`` and
iterating read ``local``. ``flush`` pushes what is pending in one transaction
(MULTI/EXEC, one round trip):

- ``inc`` -> HINCRBY on ``P:stats`` (HINCRBYFLOAT for a float amount): a cluster-wide sum;
- ``max`` -> ZADD GT on ``P:stats:max``: the largest value any worker saw;
- ``set`` -> HSET on ``P:stats:set``, the value as JSON: the last writer wins.

``run`` flushes every ``flush_interval`` seconds for as long as its task lives (start it
in the owner's TaskGroup, and ``await flush()`` once more when the crawl ends);
``totals`` reads the cluster-wide numbers in one round trip.

A flush that fails (Redis restarting, out of memory, read-only: ``FrontierUnavailable``,
see ``_errors``) keeps what was pending and merges it with what came meanwhile, so a
Redis outage loses no counts. A flush whose reply was lost after
Redis applied it, and that is sent again, counts twice: these are numbers to watch a
crawl by, not to bill by. One key must keep one kind (a sum, a max or a set value);
a sum that is a float on one worker and an int on another is summed as a float.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from skitter._tasks import TaskSet, periodic
from skitter._types import CrawlStats, ScrapyStatsNames
from skitter.exceptions import SkitterError
from skitter.redis import REDIS_ERRORS, JobKeys, translating

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT

__all__ = ["LocalStats", "RedisStats"]

#: What a failed Redis call raises here.
_FLUSH_ERRORS: tuple[type[Exception], ...] = (SkitterError, *REDIS_ERRORS, OSError)

#: This worker's own statistics, which ``RedisStats`` wraps (an ``engine.Stats``).
LocalStats = CrawlStats

logger = logging.getLogger("skitter.stats.redis")
_translated = translating(lambda self: f"Redis for {self.keys.name} (stats)")


class RedisStats(ScrapyStatsNames):
    """This worker's stats (kept in ``local``), flushed to the job's shared totals in
    Redis.

    ``redis`` is a ``redis.asyncio.Redis`` client (the caller's to configure and close).
    """

    def __init__(
        self, redis: Redis, keys: JobKeys, local: LocalStats, *, flush_interval: float = 1.0
    ) -> None:
        if not flush_interval > 0:
            raise ValueError(f"flush_interval must be > 0, got {flush_interval!r}")
        self.client = redis
        self.keys = keys
        self.flush_interval = float(flush_interval)
        #: This worker's own values.
        self.local = local
        # Pending for the next flush.
        self._incs: dict[str, int | float] = {}
        self._maxes: dict[str, float] = {}
        self._sets: dict[str, Any] = {}
        self._float_sums: set[str] = set()  # sums Redis holds as floats: HINCRBYFLOAT
        self._failing = False
        #: The flush on its way to Redis, if any (see ``flush``), and the set that owns it.
        self._out: asyncio.Future[None] | None = None
        self._sending = TaskSet()

    def __repr__(self) -> str:
        return f"<RedisStats {self.keys.tag} pending={self.pending}>"

    # -- StatsSink: the hot path, no I/O --------------------------------------------------
    def inc(self, key: str, count: int = 1) -> None:
        self.local.inc(key, count)
        incs = self._incs
        incs[key] = incs.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        self.local.set(key, value)
        self._sets[key] = value

    def max(self, key: str, value: float) -> None:
        current = self.local.get(key)
        if current is None or value > current:
            self.local.set(key, value)
            # Only a new local maximum can raise the cluster's.
            self._maxes[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        """This worker's value (``totals`` has the cluster's)."""
        return self.local.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.local)

    def to_dict(self) -> dict[str, Any]:
        """This worker's values, sorted by key."""
        return self.local.to_dict()

    @property
    def pending(self) -> int:
        """How many keys the next flush will write."""
        return len(self._incs) + len(self._maxes) + len(self._sets)

    # -- Redis ----------------------------------------------------------------------------
    @_translated
    async def flush(self) -> None:
        """Push what changed since the last flush: one MULTI/EXEC, none if nothing did.
        On a Redis error it stays pending (merged with newer changes) and the error
        propagates.

        A flush once sent is not taken back: Redis may have applied it already, so
        putting its counts back as pending would send them twice. Its caller may be
        cancelled meanwhile (the periodic flush, cancelled as the crawl ends): the flush
        then finishes on its own, and the next one (the crawl's last) waits for it."""
        out = self._out
        if out is not None and not out.done():
            await asyncio.wait({out})  # its error, if any, was its own caller's to see
        if not self.pending:
            return
        self._out = sending = self._sending.spawn(self._send())
        sending.add_done_callback(_retrieve)
        await asyncio.shield(sending)

    async def _send(self) -> None:
        """Send what is pending (see ``flush``)."""
        incs, maxes, sets = self._incs, self._maxes, self._sets
        self._incs, self._maxes, self._sets = {}, {}, {}
        written: list[str | None] = []  # the sum each command adds to; None: max or set
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                for key, amount in incs.items():
                    if isinstance(amount, int) and key not in self._float_sums:
                        pipe.hincrby(self.keys.stats, key, amount)
                    else:
                        pipe.hincrbyfloat(self.keys.stats, key, amount)
                    written.append(key)
                if maxes:
                    pipe.zadd(self.keys.stats_max, maxes, gt=True)
                    written.append(None)
                if sets:
                    encoded: dict[EncodableT, EncodableT] = {
                        key: _dumps(value) for key, value in sets.items()
                    }
                    pipe.hset(self.keys.stats_set, mapping=encoded)
                    written.append(None)
                results = await pipe.execute(raise_on_error=False)
        except BaseException:
            self._restore(incs, maxes, sets)
            raise
        for sum_key, result in zip(written, results, strict=True):
            if not isinstance(result, Exception):
                continue
            if sum_key is None or sum_key in self._float_sums:
                logger.warning("%r: Redis refused stats %s: %s", self, sum_key or "values", result)
            elif isinstance(incs[sum_key], int):
                # Another worker made this sum a float (or it left int64): HINCRBY refuses
                # it, so the amount goes again with the next flush, as HINCRBYFLOAT.
                self._incs[sum_key] = self._incs.get(sum_key, 0) + incs[sum_key]
                self._float_sums.add(sum_key)
            else:
                logger.warning("%r: Redis refused stats %s: %s", self, sum_key, result)

    def _restore(
        self, incs: dict[str, int | float], maxes: dict[str, float], sets: dict[str, Any]
    ) -> None:
        for key, amount in incs.items():
            self._incs[key] = self._incs.get(key, 0) + amount
        for key, value in maxes.items():
            if key not in self._maxes or value > self._maxes[key]:
                self._maxes[key] = value
        for key, value in sets.items():
            self._sets.setdefault(key, value)  # a newer value set meanwhile wins

    async def run(self) -> None:
        """Flush every ``flush_interval`` seconds until cancelled. A Redis outage is
        logged once (and again when it ends), never raised: the crawl goes on."""
        await periodic(self.flush_interval, self._flush_quietly)

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except _FLUSH_ERRORS as exc:
            if not self._failing:
                logger.warning("%r: cannot flush stats to Redis, will retry: %s", self, exc)
            self._failing = True
        else:
            if self._failing:
                logger.info("%r: flushing stats to Redis again", self)
            self._failing = False

    @_translated
    async def totals(self) -> dict[str, Any]:
        """The cluster-wide numbers, sorted by key: sums, maxima and last set values
        (of flushed changes only). A max that is a whole number comes back as an int."""
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hgetall(self.keys.stats)
            pipe.zrange(self.keys.stats_max, 0, -1, withscores=True)
            pipe.hgetall(self.keys.stats_set)
            sums, maxima, sets = await pipe.execute()
        totals: dict[str, Any] = {}
        for key, raw in sums.items():
            totals[_text(key)] = _number(raw)
        for key, score in maxima:
            totals[_text(key)] = int(score) if float(score).is_integer() else float(score)
        for key, raw in sets.items():
            totals[_text(key)] = orjson.loads(raw)
        return dict(sorted(totals.items()))

    async def clear(self) -> None:
        """Delete the shared totals (``flush_on_start``)."""
        await self.client.delete(self.keys.stats, self.keys.stats_max, self.keys.stats_set)


def _retrieve(sending: asyncio.Future[None]) -> None:
    """Mark a flush's error as seen: a flush whose caller was cancelled has no one to raise
    it to, and what it did not write is pending again for the next flush."""
    if not sending.cancelled():
        sending.exception()


def _dumps(value: Any) -> bytes:
    # Values orjson cannot encode (a custom object) are stored as their str().
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _number(raw: bytes | str) -> int | float:
    text = _text(raw)
    try:
        return int(text)
    except ValueError:
        return float(text)
