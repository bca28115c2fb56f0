"""Judging a run: item validation, monitors, the run report (``skitter.monitors``)."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "VALIDATION_SCHEMAS",
        {},
        object,
        "Item validation {item class or path, or '*': schema or [schemas]}: a JSON Schema "
        "(dict or .json file), a pydantic model, or an Item class whose Fields say "
        "required=True / type=...; a list means {'*': list} (see Monitors and alerts).",
    ),
    Setting(
        "VALIDATION_INVALID",
        "drop",
        str,
        "What happens to an invalid item: 'drop' it, 'keep' it (counted), or 'feed': write "
        "it to VALIDATION_INVALID_FEED only.",
    ),
    Setting(
        "VALIDATION_INVALID_FEED",
        None,
        object,
        "The feed of invalid items with VALIDATION_INVALID = 'feed': a URI, or "
        "{uri: FEEDS options}.",
    ),
    Setting(
        "VALIDATION_SAMPLES",
        10,
        int,
        "Invalid items (with their errors) kept for the run report.",
    ),
    Setting(
        "MONITOR_MIN_ITEMS",
        None,
        int,
        "Monitor min_items: at least this many items scraped; None = off.",
    ),
    Setting(
        "MONITOR_ITEM_COUNT_CHANGE",
        None,
        float,
        "Monitor item_count_change: the item count within this fraction (0.2 = 20 %) of the "
        "last comparable run's (MONITOR_HISTORY); None = off.",
    ),
    Setting(
        "MONITOR_FIELD_COVERAGE",
        {},
        dict,
        "Monitor field_coverage: {field or 'ItemClass/field': fraction} of the items that "
        "must have the field filled (not None or empty).",
    ),
    Setting(
        "MONITOR_MAX_ERROR_RATE",
        None,
        float,
        "Monitor error_rate: at most this fraction of downloads ended in an exception or "
        "an HTTP status >= 400; None = off.",
    ),
    Setting(
        "MONITOR_FINISH_REASONS",
        None,
        list,
        "Monitor finish_reason: the finish reasons that pass, e.g. ['finished']; None = off.",
    ),
    Setting(
        "MONITOR_MAX_RETRIES",
        None,
        int,
        "Monitor max_retries: at most this many retries (retry/count); None = off.",
    ),
    Setting(
        "MONITOR_MAX_BANS",
        None,
        int,
        "Monitor max_bans: at most this many responses with a BLOCK_STATUSES status; None = off.",
    ),
    Setting(
        "MONITORS",
        {},
        object,
        "Custom monitors {function, class or path: 'fail' or 'warn'} (a list: all 'fail').",
    ),
    Setting(
        "MONITOR_LEVELS",
        {},
        dict,
        "Built-in monitors that only warn: {'min_items': 'warn', ...}; default 'fail'.",
    ),
    Setting(
        "MONITOR_INTERVAL",
        0.0,
        float,
        "Seconds between runs of the monitors during the crawl (upper bounds and custom "
        "ones); 0 = at the end only.",
    ),
    Setting(
        "MONITOR_HISTORY",
        None,
        object,
        "Where runs are remembered for item_count_change: a folder, a RunHistory object or "
        "its path; None = the job directory (--job-dir), if any.",
    ),
    Setting(
        "MONITOR_REPORT",
        True,
        bool,
        "Write the run report (JSON and HTML) when monitors or validation run.",
    ),
    Setting(
        "MONITOR_REPORT_DIR",
        None,
        str,
        "Where the report goes; None = beside the first local feed, else the job "
        "directory, else the current folder.",
    ),
]
