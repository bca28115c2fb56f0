"""What the crawl shows: log level, progress lines, the final stats table."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("LOG_LEVEL", "INFO", str, "DEBUG, INFO, WARNING or ERROR."),
    Setting("LOGSTATS_INTERVAL", 60.0, float, "Seconds between progress lines off a terminal."),
    Setting("STATS_DUMP", True, bool, "Print the stats table when the crawl ends."),
]
