"""Politeness per download slot (a host, by default): concurrency, delays, token buckets,
breakers and AutoThrottle. Scrapy files these under the engine; here they are the
scheduler's slot queues' settings (``scheduler/_slots.py``, ``_throttle.py``).
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("CONCURRENT_REQUESTS_PER_DOMAIN", 8, int, "Downloads in flight at once per slot."),
    Setting(
        "CONCURRENT_REQUESTS_PER_IP",
        0,
        int,
        "If not 0, slots are by IP address (DOWNLOAD_SLOT_BY='ip') and this is their "
        "concurrency, in place of CONCURRENT_REQUESTS_PER_DOMAIN (Scrapy's meaning).",
    ),
    Setting("DOWNLOAD_DELAY", 0.0, float, "Seconds between two downloads from one slot."),
    Setting("RANDOMIZE_DOWNLOAD_DELAY", True, bool, "Wait 0.5x to 1.5x DOWNLOAD_DELAY, as Scrapy."),
    Setting(
        "DOWNLOAD_SLOTS",
        {},
        dict,
        "Per-slot overrides {slot: {'concurrency', 'delay', 'randomize_delay', 'throttle', "
        "'rate', 'burst', 'breaker_threshold', 'breaker_pause', 'breaker_probes'}}.",
    ),
    Setting(
        "DOWNLOAD_SLOT_RATE",
        0.0,
        float,
        "Token bucket per slot: downloads per second on average; 0 = no limit.",
    ),
    Setting("DOWNLOAD_SLOT_BURST", 0.0, float, "Token bucket capacity per slot; 0 = 10 x rate."),
    Setting(
        "DOWNLOAD_SLOT_BREAKER_THRESHOLD",
        0,
        int,
        "Consecutive failures that pause a slot for 300 s before probing it; 0 = off.",
    ),
    Setting(
        "DOWNLOAD_SLOT_BY",
        "host",
        str,
        "What a download slot is: host (Scrapy's), netloc (host and port) or ip (the "
        "resolved address: hosts on one server share its limits).",
    ),
    Setting("AUTOTHROTTLE_ENABLED", False, bool, "Adapt each slot's delay to its latency."),
    Setting("AUTOTHROTTLE_START_DELAY", 5.0, float, "AutoThrottle's first delay per slot."),
    Setting("AUTOTHROTTLE_MAX_DELAY", 60.0, float, "Longest delay AutoThrottle sets."),
    Setting(
        "AUTOTHROTTLE_TARGET_CONCURRENCY",
        1.0,
        float,
        "Downloads AutoThrottle aims to keep in flight per slot, on average.",
    ),
    Setting("AUTOTHROTTLE_DEBUG", False, bool, "Log every AutoThrottle adjustment."),
]
