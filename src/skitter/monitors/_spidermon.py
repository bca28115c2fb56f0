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
from skitter.settings import SpidermonSettings

__all__ = ["spidermon_monitors"]

#: Builds a monitor from Spidermon's settings (None: the monitor is off).
_Build = Callable[[SpidermonSettings], Monitor | None]

_PREFIXES = (
    "spidermon.contrib.scrapy.monitors.monitors.",
    "spidermon.contrib.scrapy.monitors.suites.",
    "spidermon.contrib.scrapy.monitors.",
)


def _need(own: SpidermonSettings, name: str, monitor: str) -> Any:
    value = getattr(own, name.lower())  # the view's field of the setting ``name``
    if value is None:
        raise ConfigError(
            f"Spidermon's {monitor} needs {name} (Spidermon fails it as not configured)"
        )
    return value


def _limit(monitor: str, stat: str, op: str, setting: str) -> _Build:
    def build(own: SpidermonSettings) -> Monitor:
        return StatLimit(monitor, stat, op, _need(own, setting, monitor))

    return build


def _optional(monitor: str, stat: str, op: str, setting: str) -> _Build:
    """A limit whose setting turns the monitor off below 0 (Spidermon's -1)."""

    def build(own: SpidermonSettings) -> Monitor | None:
        bound = getattr(own, setting.lower())
        return StatLimit(monitor, stat, op, bound) if bound >= 0 else None

    return build


def _codes(own: SpidermonSettings) -> Monitor:
    codes = own.spidermon_unwanted_http_codes
    most = own.spidermon_unwanted_http_codes_max_count
    limits = dict(codes) if isinstance(codes, Mapping) else dict.fromkeys(codes, most)
    return HttpCodes({int(code): limit for code, limit in limits.items()})


def _coverage(own: SpidermonSettings) -> Monitor:
    if not own.spidermon_add_field_coverage:
        raise ConfigError(
            "Spidermon's FieldCoverageMonitor needs SPIDERMON_ADD_FIELD_COVERAGE = True"
        )
    return FieldCoverage(
        dict(own.spidermon_field_coverage_rules),
        skip_without_items=own.spidermon_field_coverage_skip_if_no_item,
        name="FieldCoverageMonitor",
    )


_MONITORS: Mapping[str, _Build] = {
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
        s.spidermon_expected_finish_reasons, name="FinishReasonMonitor"
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
        s.spidermon_min_successful_requests,
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


def spidermon_monitors(own: SpidermonSettings, path: Any, setting: str) -> list[Monitor]:
    """The monitors a Spidermon path stands for (a suite is several)."""
    name = _name(path, setting)
    names = _SUITE if name == "SpiderCloseMonitorSuite" else (name,)
    built = [_MONITORS[one](own) for one in names]
    return [monitor for monitor in built if monitor is not None]
