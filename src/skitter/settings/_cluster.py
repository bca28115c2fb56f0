"""Distributed crawling on Redis: what ``skitter worker`` reads."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "LEASE_SECONDS",
        30.0,
        float,
        "Workers: how long a leased task is a worker's before others may take it "
        "(renewed while it runs).",
    ),
    Setting(
        "WORKER_IDLE_TIMEOUT",
        5.0,
        float,
        "Workers: seconds the whole cluster must be idle before they exit; -1 = wait "
        "for pushed URLs forever.",
    ),
    Setting(
        "REDIS_CLUSTER",
        False,
        bool,
        "Workers: the --redis URL names any node of a Redis Cluster (--redis-cluster).",
    ),
    Setting(
        "REDIS_SENTINEL_MASTER",
        "",
        str,
        "Workers: the --redis URL names a sentinel; use the master it knows by this name "
        "(--redis-sentinel; empty = no Sentinel).",
    ),
    Setting(
        "REDIS_SHARDS",
        1,
        int,
        "Workers: split the job's frontier by host over this many shards, each on its own "
        "hash tag (on a Redis Cluster: on different masters); fixed when the job is created "
        "(--shards).",
    ),
    Setting(
        "REDIS_SENTINEL_PASSWORD",
        "",
        str,
        "Workers: the sentinel's own password (its requirepass), if it has one; the "
        "--redis URL's credentials are the master's (default: $SKITTER_REDIS_SENTINEL_PASSWORD).",
    ),
    Setting(
        "REDIS_SENTINEL_WAIT_REPLICAS",
        1,
        int,
        "Workers behind Sentinel: a push returns only once this many replicas hold it "
        "(WAIT), so a failover loses no pushed link; fewer in time pause the worker "
        "(0 = do not wait).",
    ),
    Setting(
        "REDIS_SENTINEL_WAIT_TIMEOUT",
        1.0,
        float,
        "Workers behind Sentinel: seconds a push waits for REDIS_SENTINEL_WAIT_REPLICAS.",
    ),
    Setting(
        "REDIS_QUEUE_KIND",
        "priority",
        str,
        "Workers: priority, fifo or lifo.",
        scrapy="SCHEDULER_QUEUE_CLASS (scrapy-redis)",
    ),
    Setting(
        "REDIS_PUSH_CACHE",
        100_000,
        int,
        "Workers: taskids a worker remembers pushing, so that links to them are not "
        "sent to Redis again (0 = off).",
    ),
    Setting(
        "REDIS_DUPEFILTER",
        "exact",
        str,
        "Workers: 'exact' (every finished task's outcome and time: recrawl by age and itag) "
        "or 'bloom' (successes as a few bits each: no recrawl by age or itag).",
    ),
    Setting(
        "REDIS_BLOOM_CAPACITY",
        10_000_000,
        int,
        "Workers: URLs the Bloom filter is sized for (more raise its false-positive rate).",
    ),
    Setting(
        "REDIS_BLOOM_ERROR_RATE",
        0.001,
        float,
        "Workers: the Bloom filter's false-positive rate at capacity (0.001: 1.8 bytes per URL).",
    ),
    Setting(
        "REDIS_BAD_MAX",
        10_000,
        int,
        "Workers: entries the job's bad hash keeps of what was moved aside as unreadable "
        "(the oldest are dropped, and counted); 0 = count only.",
    ),
    Setting(
        "REDIS_PERSIST",
        True,
        bool,
        "Workers: keep queue and dupe filter after the crawl.",
        scrapy="SCHEDULER_PERSIST (scrapy-redis)",
    ),
    Setting(
        "REDIS_FLUSH_ON_START",
        False,
        bool,
        "Workers: clear the job's queue and filter first.",
        scrapy="SCHEDULER_FLUSH_ON_START (scrapy-redis)",
    ),
]
