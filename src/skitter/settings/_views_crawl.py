"""Typed views of the crawl's core: the engine, the project scheduler, the per-slot
politeness rules and the Redis cluster.

Each view lists, as lower-case fields, the settings one subsystem reads; its field types
follow the declarations (``_engine``, ``_scheduler``, ``_politeness``, ``_cluster``...),
a test keeps the two in step. A view is built once per resolved Settings
(``settings.view(EngineSettings)``), so it is read once per crawl, never per request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from skitter.settings._views import View

__all__ = [
    "ClusterSettings",
    "EngineSettings",
    "PolitenessSettings",
    "SchedulerSettings",
    "SpiderSettings",
]


@dataclasses.dataclass(frozen=True, slots=True)
class EngineSettings(View):
    """What the crawler, the engine, its extensions, tracing and the CLI's run read."""

    asyncio_event_loop: str
    jobdir: str
    bot_name: str
    concurrent_requests: int
    concurrent_items: int
    shutdown_timeout: float
    worker_idle_timeout: float
    closespider_timeout: float
    closespider_itemcount: int
    closespider_pagecount: int
    closespider_errorcount: int
    fail_when_no_start_succeeds: bool
    retry_enabled: bool
    retry_times: int
    retry_delays: tuple[float, ...]
    retry_give_up_log_level: object  # a level name or number: read by ``give_up_level``
    robotstxt_obey: bool
    extensions: Mapping[Any, int | None]
    item_pipelines: Mapping[Any, int | None]
    tracing_enabled: bool
    tracing_exporter: Any  # "console", "otlp", or an exporter
    tracing_otlp_endpoint: str | None
    tracing_service_name: str | None
    download_transport: Any  # a name, or a transport factory
    log_formatter: Any  # a class or its dotted path
    logstats_interval: float
    log_versions: tuple[str, ...]
    stats_dump: bool
    dupefilter_class: Any  # a class or its dotted path; None: none
    dupefilter_debug: bool
    request_fingerprinter_class: Any  # a class or its dotted path


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerSettings(View):
    """The project scheduler's: token bucket, breaker, leases, fair share, outages."""

    rate: float | None
    burst: float | None
    max_rate: float | None
    max_burst: float | None
    breaker_threshold: int
    breaker_pause: float
    breaker_probes: int
    processing_timeout: float
    scheduler_max_held: int
    frontier_outage_timeout: float
    fairshare_min: float
    fairshare_max: float
    fairshare_window: int


@dataclasses.dataclass(frozen=True, slots=True)
class PolitenessSettings(View):
    """Per-slot limits (concurrency, delay, rate, breaker) and the auto-throttle."""

    download_slot_by: str
    concurrent_requests_per_ip: int
    concurrent_requests_per_domain: int
    download_delay: float
    randomize_download_delay: bool
    download_slot_rate: float
    download_slot_burst: float
    download_slot_breaker_threshold: int
    download_slots: Mapping[str, Any]
    autothrottle_enabled: bool
    autothrottle_start_delay: float
    autothrottle_max_delay: float
    autothrottle_target_concurrency: float
    autothrottle_debug: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ClusterSettings(View):
    """A Redis cluster job's: leases, the shared frontier's shape, its lifetime."""

    lease_seconds: float
    redis_queue_kind: str
    redis_push_cache: int
    redis_dupefilter: str
    redis_bloom_capacity: int
    redis_bloom_error_rate: float
    redis_bad_max: int
    redis_shards: int
    redis_flush_on_start: bool
    redis_persist: bool
    redis_cluster: bool
    redis_sentinel_master: str
    redis_sentinel_password: str
    redis_sentinel_wait_replicas: int
    redis_sentinel_wait_timeout: float
    max_rate: float | None
    max_burst: float | None


@dataclasses.dataclass(frozen=True, slots=True)
class SpiderSettings(View):
    """The spider middlewares': which run, and the built-ins' limits and policies."""

    spider_middlewares: Mapping[Any, int | None]
    spider_middlewares_base: Mapping[Any, int | None] | None
    httperror_allowed_codes: tuple[int, ...]
    httperror_allow_all: bool
    referer_enabled: bool
    referrer_policy: Any  # a policy's name, or its class
    referrer_policies: Mapping[str, Any]
    urllength_limit: int
    depth_limit: int
    depth_priority: int
    depth_stats_verbose: bool
    meta_copy_warn_skip_keys: tuple[str, ...]
