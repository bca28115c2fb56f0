"""What the crawl shows: the log (Scrapy's LOG_* settings), progress lines, the stats table."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "LOG_LEVEL",
        "INFO",
        str,
        "DEBUG, INFO, WARNING, ERROR or CRITICAL (`-L`); above INFO, no stats table either.",
    ),
    Setting(
        "LOG_ENABLED", True, bool, "Log to stderr; False (`--nolog`) logs nowhere but LOG_FILE."
    ),
    Setting("LOG_FILE", None, str, "Log to this file instead of stderr (`--logfile`)."),
    Setting("LOG_FILE_APPEND", True, bool, "Append to LOG_FILE; False truncates it first."),
    Setting("LOG_ENCODING", "utf-8", str, "The encoding of LOG_FILE."),
    Setting(
        "LOG_FORMAT",
        "%(asctime)s [%(name)s] %(levelname)s: %(message)s",
        str,
        "The layout of a log record (Python's logging placeholders); off a terminal, or "
        "on one when changed.",
    ),
    Setting(
        "LOG_FORMATTER",
        None,
        object,
        "A class (or path) with Scrapy's LogFormatter methods (skitter.logformatter) that "
        "shapes, or silences, the crawled / scraped / dropped / error lines; None = "
        "skitter's own lines.",
    ),
    Setting(
        "LOG_VERSIONS",
        ["lxml", "libxml2", "cssselect", "parsel", "w3lib", "Python", "Platform"],
        list,
        "Components whose versions are logged at start (distribution names, or libxml2, "
        "Python, Platform, pyOpenSSL); empty = no versions line.",
    ),
    Setting("LOG_DATEFORMAT", "%Y-%m-%d %H:%M:%S", str, "The layout of `%(asctime)s` (strftime)."),
    Setting(
        "LOG_SHORT_NAMES", False, bool, "Show skitter's loggers as `skitter`, not `skitter.engine`."
    ),
    Setting(
        "LOG_STDOUT",
        False,
        bool,
        "Log what the process prints to stdout (logger `stdout`, INFO); not with `-o -`.",
    ),
    Setting("LOGSTATS_INTERVAL", 60.0, float, "Seconds between progress lines off a terminal."),
    Setting("STATS_DUMP", True, bool, "Print the stats table when the crawl ends."),
]
