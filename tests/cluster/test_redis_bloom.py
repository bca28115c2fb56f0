"""The Redis Bloom filter on a real redis-server: "was new" answers, its measured false
positive rate against the target, blocks, shared use by two workers, and its stated size."""

from __future__ import annotations

import random
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.exceptions import ConfigError
from skitter.frontier._redis._bloom import BloomShape, RedisBloomFilter
from skitter.redis import JobKeys


def fingerprints(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.getrandbits(160):040x}" for _ in range(n)]


def test_the_documented_sizes_hold() -> None:
    shape = BloomShape.for_capacity(100_000_000, 0.001)
    assert shape.hashes == 10
    assert shape.memory_bytes == pytest.approx(180e6, rel=0.01)
    assert shape.bits_per_item == pytest.approx(14.38, abs=0.01)
    assert shape.false_positive_rate(shape.capacity) == pytest.approx(0.001, rel=0.05)
    assert shape.false_positive_rate(2 * shape.capacity) == pytest.approx(0.057, abs=0.001)
    one_percent = BloomShape.for_capacity(100_000_000, 0.01)
    assert (one_percent.hashes, round(one_percent.memory_bytes / 1e6)) == (7, 120)


@pytest.mark.parametrize(("capacity", "error_rate"), [(0, 0.01), (10, 0.0), (10, 1.0), (10, -1)])
def test_a_shape_that_cannot_work_is_refused(capacity: int, error_rate: float) -> None:
    with pytest.raises(ValueError, match="Bloom filter"):
        BloomShape.for_capacity(capacity, error_rate)


async def test_add_many_says_which_fingerprints_were_new(client: Redis, keys: JobKeys) -> None:
    bloom = RedisBloomFilter(client, keys, capacity=1000, error_rate=0.001)
    assert await bloom.add_many(["a", "b", "a", b"c"]) == [True, True, False, True]
    assert await bloom.add_many(["c", "d", "b"]) == [False, True, False]
    assert await bloom.add_many([]) == []
    assert await bloom.contains_many(["a", "d", "zzz"]) == [True, True, False]
    assert await bloom.count() == 4


async def test_two_workers_share_one_filter(client: Redis, redis_url: str, keys: JobKeys) -> None:
    other_client = Redis.from_url(redis_url)
    try:
        one = RedisBloomFilter(client, keys, capacity=1000, error_rate=0.01)
        two = RedisBloomFilter(other_client, keys, capacity=1000, error_rate=0.01)
        assert await one.add_many(["x", "y"]) == [True, True]
        assert await two.add_many(["y", "z"]) == [False, True]
        other_job = RedisBloomFilter(
            client, JobKeys.for_job("shop", "other"), capacity=1000, error_rate=0.01
        )
        assert await other_job.add_many(["x"]) == [True]
    finally:
        await other_client.aclose()


async def test_the_false_positive_rate_is_near_the_target(client: Redis, keys: JobKeys) -> None:
    capacity, target = 50_000, 0.01
    bloom = RedisBloomFilter(client, keys, capacity=capacity, error_rate=target)
    added = await bloom.add_many(fingerprints(capacity, seed=1))
    # 160-bit random fingerprints never collide; every "not new" here is a false positive.
    early = added.count(False)
    assert early < capacity * target, "a filter filling up answers 'seen' less than at capacity"
    others = fingerprints(capacity, seed=2)
    false_positives = sum(await bloom.contains_many(others))
    rate = false_positives / len(others)
    assert target / 2 <= rate <= target * 2, f"measured {rate:.4%} for a {target:.2%} filter"
    assert await bloom.count() == capacity - early


async def test_a_filter_split_in_blocks_works_like_one(client: Redis, keys: JobKeys) -> None:
    bloom = RedisBloomFilter(client, keys, capacity=2_000, error_rate=0.01, block_bits=4_096)
    assert len(bloom.redis_keys) - 1 == -(-bloom.shape.bits // 4_096) >= 4
    items = fingerprints(2_000, seed=3)
    assert sum(await bloom.add_many(items)) >= 1_980
    assert all(await bloom.contains_many(items)), "a Bloom filter never forgets"
    rate = sum(await bloom.contains_many(fingerprints(5_000, seed=4))) / 5_000
    assert 0.005 <= rate <= 0.02
    for index in range(len(bloom.redis_keys) - 1):
        assert await client.strlen(keys.bloom_block(index)) <= 4_096 // 8
    assert await client.strlen(keys.bloom_block(len(bloom.redis_keys) - 2)) > 0


async def test_workers_must_agree_on_the_shape(client: Redis, keys: JobKeys) -> None:
    await RedisBloomFilter(client, keys, capacity=1000, error_rate=0.01).add_many(["a"])
    other = RedisBloomFilter(client, keys, capacity=5000, error_rate=0.01)
    with pytest.raises(ConfigError, match="created with bits="):
        await other.add_many(["b"])
    with pytest.raises(ConfigError, match="created with bits="):
        await other.contains_many(["b"])


async def test_clear_forgets_everything(client: Redis, keys: JobKeys) -> None:
    bloom = RedisBloomFilter(client, keys, capacity=1000, error_rate=0.01)
    await bloom.add_many(["a", "b"])
    await bloom.clear()
    assert await client.keys(f"{keys.tag}*") == []
    assert await bloom.add_many(["a"]) == [True]


async def test_add_many_is_one_round_trip_per_batch(counted: Any, keys: JobKeys) -> None:
    bloom = RedisBloomFilter(counted.client, keys, capacity=10_000, error_rate=0.01, batch_size=100)
    await bloom.add_many(["warm"])  # the first call loads the script
    before = counted.sends
    await bloom.add_many(fingerprints(250, seed=5))
    assert counted.sends - before == 3
    before = counted.sends
    await bloom.contains_many(fingerprints(100, seed=6))
    assert counted.sends - before == 1
