"""The project scheduler (pyspider's): the project's token bucket and
breaker, leases, fair share, and how long the task store may be away.
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("RATE", None, float, "Project token bucket: tasks per second; None = unlimited."),
    Setting("BURST", None, float, "Project token bucket capacity; None = 10 x RATE."),
    Setting("MAX_RATE", None, float, "Highest RATE that may be set, also live; None = no cap."),
    Setting("MAX_BURST", None, float, "Highest BURST that may be set, also live."),
    Setting("BREAKER_THRESHOLD", 10, int, "Consecutive failed tasks that pause a project."),
    Setting("BREAKER_PAUSE", 300.0, float, "Seconds a project stays paused by its breaker."),
    Setting("BREAKER_PROBES", 3, int, "Tasks let through after a pause to probe the site."),
    Setting(
        "PROCESSING_TIMEOUT",
        600.0,
        float,
        "Seconds a leased task may take before it is put back in the queue.",
    ),
    Setting("FAIRSHARE_MIN", 0.10, float, "Least share of dispatches a backlogged project gets."),
    Setting("FAIRSHARE_MAX", 0.33, float, "Most share of dispatches one project gets."),
    Setting("FAIRSHARE_WINDOW", 1000, int, "Dispatches over which shares are counted."),
    Setting(
        "FRONTIER_OUTAGE_TIMEOUT",
        600.0,
        float,
        "Seconds the task store (Redis) may stay unavailable before the crawl fails; "
        "0 = wait for ever.",
    ),
    Setting(
        "SCHEDULER_MAX_HELD",
        10_000,
        int,
        "Leased tasks a process keeps in its slot queues; more are leased only when none "
        "of those can start.",
    ),
]
