"""Items sent to Redis by ``skitter.pipelines.RedisPipeline`` (scrapy-redis's names)."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "REDIS_ITEMS_URL",
        None,
        str,
        "RedisPipeline: where items go; None = the worker's --redis (a crawl without one "
        "must set it).",
    ),
    Setting(
        "REDIS_ITEMS_KEY",
        "%(spider)s:items",
        str,
        "RedisPipeline: the list or stream, %(spider)s being the spider's name.",
        scrapy="REDIS_ITEMS_KEY (scrapy-redis)",
    ),
    Setting("REDIS_ITEMS_TYPE", "list", str, "RedisPipeline: 'list' (RPUSH) or 'stream' (XADD)."),
    Setting(
        "REDIS_ITEMS_FORMAT", "json", str, "RedisPipeline: 'json' (orjson) or 'msgpack' (msgspec)."
    ),
    Setting(
        "REDIS_ITEMS_MAXLEN",
        0,
        int,
        "RedisPipeline: keep the newest N (LTRIM, or XTRIM MAXLEN ~ N); 0 = unbounded, "
        "since trimming drops items nobody may have read (counted in redis_items/trimmed).",
    ),
    Setting(
        "REDIS_ITEMS_OUTAGE_TIMEOUT",
        600.0,
        float,
        "RedisPipeline: seconds its Redis may stay unavailable (items held, tried again) "
        "before the crawl fails; 0 = wait for ever.",
    ),
]
