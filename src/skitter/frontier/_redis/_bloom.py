"""A Bloom filter on Redis bitmaps: the dupe filter for crawls of hundreds of millions
of URLs.

The exact filter costs about 100 bytes of Redis memory per URL (measured on Redis 7:
96 for scrapy-redis's set of hex SHA-1s, 123 for the frontier's ``done`` hash); at 100 M
URLs that is 10-12 GB, on one shard, since a job's keys share a hash tag. A Bloom filter
answers "seen?" in a fixed 1-2.5 bytes per URL, at the price of a small rate of false
"seen" answers: a URL never crawled is taken for a duplicate and skipped. It never
answers "new" for a URL it has seen.

Size, for ``n = capacity`` fingerprints and a target false-positive rate ``p``::

    m = ceil(-n ln p / (ln 2)^2)   bits in all         (m/n = 1.44 log2(1/p) bits per URL)
    k = round(m/n ln 2)            bit positions per fingerprint
    false positives after n' adds: (1 - e^(-k n'/m))^k

=========  ============  =============  ====  ============  ===========
p          bits per URL  bytes per URL  k     100 M URLs    1 G URLs
=========  ============  =============  ====  ============  ===========
1 %        9.59          1.20           7     120 MB        1.2 GB
0.1 %      14.38         1.80           10    180 MB        1.8 GB
0.01 %     19.17         2.40           13    240 MB        2.4 GB
=========  ============  =============  ====  ============  ===========

Past its capacity the filter still works, but its false-positive rate climbs (twice the
capacity at 0.1 % gives 5.7 %): size it for the whole crawl, and watch
``false_positive_rate(await count())`` in the stats.

Positions: the script derives the k positions from the fingerprint's SHA-1 by enhanced
double hashing (``lua/_bloom.lua``), so the fingerprint alone goes on the wire, and the
frontier's own scripts, which share that code, find the same bits. The bitmap is
split into blocks of ``block_bits`` (one key each, all under the job's hash tag): one
Redis string holds at most 2^32 bits, and smaller keys are gentler on replication and
on a DEL (``clear`` uses UNLINK). The first SETBIT near the end of a block allocates the
whole block at once.

Round trips: ``add_many`` and ``contains_many`` are one EVALSHA per ``batch_size``
fingerprints; ``count`` one HGET. Two workers with a different shape on one job are
refused (``ConfigError``), since their positions would not match.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import ResponseError

from skitter.exceptions import ConfigError
from skitter.redis import JobKeys, register

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from skitter.http import Request

logger = logging.getLogger("skitter.frontier.redis")

__all__ = ["BloomShape", "RedisBloomFilter"]

_MAX_BLOCK_BITS = 2**32  # Redis's limit on one string (512 MB)
_DEFAULT_BLOCK_BITS = 2**30  # 128 MiB per key


@dataclass(frozen=True, slots=True)
class BloomShape:
    """The size of a Bloom filter for ``capacity`` fingerprints at ``error_rate``."""

    capacity: int
    error_rate: float
    bits: int
    hashes: int

    @classmethod
    def for_capacity(cls, capacity: int, error_rate: float) -> BloomShape:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"Bloom filter capacity must be an integer >= 1, got {capacity!r}")
        if not 0 < error_rate < 1:
            raise ValueError(f"Bloom filter error rate must be in (0, 1), got {error_rate!r}")
        bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
        hashes = max(1, round(bits / capacity * math.log(2)))
        return cls(capacity, float(error_rate), bits, hashes)

    @property
    def memory_bytes(self) -> int:
        """Redis memory the bitmap takes once full-grown."""
        return (self.bits + 7) // 8

    @property
    def bits_per_item(self) -> float:
        return self.bits / self.capacity

    def false_positive_rate(self, count: int) -> float:
        """The expected rate after ``count`` distinct fingerprints were added."""
        return float((1.0 - math.exp(-self.hashes * count / self.bits)) ** self.hashes)


class RedisBloomFilter:
    """A Bloom filter of fingerprints in Redis, shared by every worker of a job.

    ``redis`` is a ``redis.asyncio.Redis`` client (the caller's to configure and close).
    Usable on its own, or as the dupe filter in front of the frontier's exact ``done``
    hash. ``batch_size`` bounds the fingerprints per script call, since Redis runs
    nothing else while a script runs (1,000 fingerprints at k=10 take about a
    millisecond).
    """

    def __init__(
        self,
        redis: Redis,
        keys: JobKeys,
        *,
        capacity: int,
        error_rate: float,
        batch_size: int = 1_000,
        block_bits: int = _DEFAULT_BLOCK_BITS,
    ) -> None:
        if not 0 < block_bits <= _MAX_BLOCK_BITS:
            raise ValueError(f"block_bits must be in (0, 2**32], got {block_bits!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        self.client = redis
        self.keys = keys
        self.shape = BloomShape.for_capacity(capacity, error_rate)
        self.batch_size = batch_size
        self.block_bits = block_bits
        blocks = -(-self.shape.bits // block_bits)
        #: The filter's keys: its hash, then the blocks of its bitmap.
        self.redis_keys = [keys.bloom, *(keys.bloom_block(i) for i in range(blocks))]
        self._args = [str(self.shape.bits), str(self.shape.hashes), str(block_bits)]
        self._script = register(redis, "bloom_add", "_bloom", package="skitter.frontier._redis")
        self._warned_recrawl = False

    def __repr__(self) -> str:
        shape = self.shape
        return (
            f"<RedisBloomFilter {self.keys.tag} capacity={shape.capacity} "
            f"error_rate={shape.error_rate:g} bits={shape.bits} hashes={shape.hashes}>"
        )

    async def add_many(self, fingerprints: Sequence[str | bytes]) -> list[bool]:
        """Add the fingerprints; for each, whether it was new. A fingerprint repeated in
        the batch is new the first time only. A false "not new" happens at the filter's
        false-positive rate; a false "new" never does."""
        return await self._run("add", fingerprints)

    async def contains_many(self, fingerprints: Sequence[str | bytes]) -> list[bool]:
        """For each fingerprint, whether it may have been added (changes nothing)."""
        return await self._run("check", fingerprints)

    async def count(self) -> int:
        """How many fingerprints were added as new, by all workers."""
        return int(await self.client.hget(self.keys.bloom, "count") or 0)

    async def stats(self) -> dict[str, float]:
        """The filter's fill, for the crawl's stats: fingerprints added, the
        false-positive rate expected at that count, and its bitmap's size."""
        count = await self.count()
        return {
            "dupefilter/bloom/count": count,
            "dupefilter/bloom/false_positive_rate": self.shape.false_positive_rate(count),
            "dupefilter/bloom/memory_bytes": self.shape.memory_bytes,
        }

    def warn_recrawl(self, request: Request) -> None:
        """Say once that ``request``'s recrawl rule cannot hold under the filter."""
        if self._warned_recrawl or (request.age < 0 and request.itag is None):
            return
        self._warned_recrawl = True
        logger.warning(
            "%r: the Bloom filter keeps no crawl times or itags, so a finished task is "
            "not recrawled for its age or a new itag (%s); forced requests still are. "
            "Use REDIS_DUPEFILTER='exact' to recrawl by age or itag.",
            self,
            request,
        )

    async def clear(self) -> None:
        """Forget everything (``flush_on_start``); UNLINK frees the blocks in the
        background."""
        await self.client.unlink(*self.redis_keys)

    async def _run(self, mode: str, fingerprints: Sequence[str | bytes]) -> list[bool]:
        results: list[bool] = []
        for start in range(0, len(fingerprints), self.batch_size):
            batch = fingerprints[start : start + self.batch_size]
            flags = await self._call(mode, batch)
            results.extend(bool(flag) for flag in flags)
        return results

    async def fix_shape(self) -> None:
        """Write the filter's shape, or check it against the one already written:
        ``ConfigError`` if they differ. The frontier's scripts read it from there."""
        await self._call("shape", ())

    async def _call(self, mode: str, fingerprints: Sequence[str | bytes]) -> list[int]:
        try:
            return list(await self._script(self.redis_keys, [mode, *self._args, *fingerprints]))
        except ResponseError as exc:
            if "skitter:" in str(exc):
                raise ConfigError(f"{self!r}: {exc}") from None
            raise
