"""Spidermon's built-in monitors, by their paths, as skitter's monitors.

SPIDERMON_SPIDER_CLOSE_MONITORS and SPIDERMON_PERIODIC_MONITORS name Spidermon's suite
(``SpiderCloseMonitorSuite``) or its monitors (``ItemCountMonitor``...), at any of the
paths Spidermon exports them from. Each maps to a skitter monitor configured by the
same ``SPIDERMON_*`` setting, with Spidermon's meaning. Where Spidermon would fail a
monitor as not configured (ItemCountMonitor without SPIDERMON_MIN_ITEMS), skitter
refuses the crawl at start, naming the setting. A project's own suites are Spidermon
classes (unittest cases with actions) that skitter does not run: refused, with what to
write instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from skitter.exceptions import ConfigError
from skitter.monitors._base import Monitor
from skitter.monitors._builtin import (
    ExecutionTime,
    FieldCoverage,
    FinishReason,
    HttpCodes,
    ItemCountIncrease,
    StatLimit,
)

__all__ = ["spidermon_monitors"]

_PREFIXES = (
    "spidermon.contrib.scrapy.monitors.monitors.",
    "spidermon.contrib.scrapy.monitors.suites.",
    "spidermon.contrib.scrapy.monitors.",
)


def _need(settings: Mapping[str, Any], name: str, monitor: str) -> Any:
    value = settings[name]
    if value is None:
        raise ConfigError(
            f"Spidermon's {monitor} needs {name} (Spidermon fails it as not configured)"
        )
    return value


def _limit(monitor: str, stat: str, op: str, setting: str) -> Callable[[Any], Monitor | None]:
    def build(settings: Mapping[str, Any]) -> Monitor:
        return StatLimit(monitor, stat, op, _need(settings, setting, monitor))

    return build


def _optional(monitor: str, stat: str, op: str, setting: str) -> Callable[[Any], Monitor | None]:
    """A limit whose setting turns the monitor off below 0 (Spidermon's -1)."""

    def build(settings: Mapping[str, Any]) -> Monitor | None:
        bound = settings[setting]
        return StatLimit(monitor, stat, op, bound) if bound >= 0 else None

    return build


def _codes(settings: Mapping[str, Any]) -> Monitor:
    codes = settings["SPIDERMON_UNWANTED_HTTP_CODES"]
    most = settings["SPIDERMON_UNWANTED_HTTP_CODES_MAX_COUNT"]
    limits = dict(codes) if isinstance(codes, Mapping) else dict.fromkeys(codes, most)
    return HttpCodes({int(code): limit for code, limit in limits.items()})


def _coverage(settings: Mapping[str, Any]) -> Monitor:
    if not settings["SPIDERMON_ADD_FIELD_COVERAGE"]:
        raise ConfigError(
            "Spidermon's FieldCoverageMonitor needs SPIDERMON_ADD_FIELD_COVERAGE = True"
        )
    return FieldCoverage(
        dict(settings["SPIDERMON_FIELD_COVERAGE_RULES"]),
        skip_without_items=settings["SPIDERMON_FIELD_COVERAGE_SKIP_IF_NO_ITEM"],
        name="FieldCoverageMonitor",
    )


_MONITORS: Mapping[str, Callable[[Any], Monitor | None]] = {
    "ItemCountMonitor": _limit(
        "ItemCountMonitor", "item_scraped_count", ">=", "SPIDERMON_MIN_ITEMS"
    ),
    "ItemValidationMonitor": _limit(
        "ItemValidationMonitor", "validation/errors", "<=", "SPIDERMON_MAX_ITEM_VALIDATION_ERRORS"
    ),
    "ErrorCountMonitor": _limit(
        "ErrorCountMonitor", "log_count/ERROR", "<=", "SPIDERMON_MAX_ERRORS"
    ),
    "WarningCountMonitor": _limit(
        "WarningCountMonitor", "log_count/WARNING", "<=", "SPIDERMON_MAX_WARNINGS"
    ),
    "CriticalCountMonitor": _limit(
        "CriticalCountMonitor", "log_count/CRITICAL", "<=", "SPIDERMON_MAX_CRITICALS"
    ),
    "FinishReasonMonitor": lambda s: FinishReason(
        s["SPIDERMON_EXPECTED_FINISH_REASONS"], name="FinishReasonMonitor"
    ),
    "UnwantedHTTPCodesMonitor": _codes,
    "FieldCoverageMonitor": _coverage,
    "RetryCountMonitor": _optional(
        "RetryCountMonitor", "retry/max_reached", "<=", "SPIDERMON_MAX_RETRIES"
    ),
    "DownloaderExceptionMonitor": _limit(
        "DownloaderExceptionMonitor",
        "downloader/exception_count",
        "<=",
        "SPIDERMON_MAX_DOWNLOADER_EXCEPTIONS",
    ),
    "SuccessfulRequestsMonitor": lambda s: StatLimit(
        "SuccessfulRequestsMonitor",
        "downloader/response_status_count/200",
        ">=",
        s["SPIDERMON_MIN_SUCCESSFUL_REQUESTS"],
    ),
    "TotalRequestsMonitor": _optional(
        "TotalRequestsMonitor", "downloader/request_count", "<=", "SPIDERMON_MAX_REQUESTS_ALLOWED"
    ),
    "PeriodicExecutionTimeMonitor": lambda s: ExecutionTime(
        _need(s, "SPIDERMON_MAX_EXECUTION_TIME", "PeriodicExecutionTimeMonitor")
    ),
    "PeriodicItemCountMonitor": lambda s: ItemCountIncrease(
        _need(s, "SPIDERMON_ITEM_COUNT_INCREASE", "PeriodicItemCountMonitor")
    ),
}

#: Spidermon's ready-made suite, in its order.
_SUITE = (
    "ItemCountMonitor",
    "ItemValidationMonitor",
    "ErrorCountMonitor",
    "WarningCountMonitor",
    "FinishReasonMonitor",
    "UnwantedHTTPCodesMonitor",
    "FieldCoverageMonitor",
    "RetryCountMonitor",
    "DownloaderExceptionMonitor",
    "SuccessfulRequestsMonitor",
    "TotalRequestsMonitor",
)


def _name(path: Any, setting: str) -> str:
    if isinstance(path, str):
        for prefix in _PREFIXES:
            name = path[len(prefix) :] if path.startswith(prefix) else ""
            if name in _MONITORS or name == "SpiderCloseMonitorSuite":
                return name
    if isinstance(path, str) and path.endswith("ZyteJobsComparisonMonitor"):
        raise ConfigError(
            f"{setting}: ZyteJobsComparisonMonitor compares with Scrapy Cloud jobs; "
            "MONITOR_ITEM_COUNT_CHANGE compares with the last run in MONITOR_HISTORY"
        )
    raise ConfigError(
        f"{setting}: {path!r} is not one of Spidermon's built-in monitors or its "
        "SpiderCloseMonitorSuite; skitter does not run Spidermon suites (unittest cases "
        "with actions): write each check as a function or class in MONITORS, and alerts "
        "as ALERT_WEBHOOKS / ALERT_EMAIL_TO (see the documentation: monitors)"
    )


def spidermon_monitors(settings: Mapping[str, Any], path: Any, setting: str) -> list[Monitor]:
    """The monitors a Spidermon path stands for (a suite is several)."""
    name = _name(path, setting)
    names = _SUITE if name == "SpiderCloseMonitorSuite" else (name,)
    built = [_MONITORS[one](settings) for one in names]
    return [monitor for monitor in built if monitor is not None]
