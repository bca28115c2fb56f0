"""Which monitors a crawl runs, and when: read from the settings at start.

The built-ins are on when their setting is (MONITOR_MIN_ITEMS...), the project's own
come from MONITORS, Spidermon's from SPIDERMON_SPIDER_CLOSE_MONITORS and
SPIDERMON_PERIODIC_MONITORS when SPIDERMON_ENABLED. Every value is checked here, so a
coverage of 90 (meant as 90 %) or a level of "warning" stops the crawl before it starts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skitter._components import SPIDERMON_EXTENSION, spidermon_installed
from skitter._types import CrawlContext
from skitter.exceptions import ConfigError
from skitter.monitors._base import Monitor, as_monitor, level_of
from skitter.monitors._builtin import (
    Bans,
    ErrorRate,
    FieldCoverage,
    FinishReason,
    ItemCountChange,
    StatLimit,
)
from skitter.monitors._spidermon import spidermon_monitors
from skitter.settings import MonitorSettings, SpidermonSettings

__all__ = ["BUILTIN_NAMES", "Plan", "plan"]

log = logging.getLogger("skitter.monitors")

BUILTIN_NAMES = (
    "min_items",
    "item_count_change",
    "field_coverage",
    "error_rate",
    "finish_reason",
    "max_retries",
    "max_bans",
)


@dataclass
class Plan:
    """The monitors run at the end, and those run every so many seconds meanwhile."""

    end: list[Monitor] = field(default_factory=list)
    periodic: list[tuple[float, list[Monitor]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.end or self.periodic)


def _fraction(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"{where} must be a fraction from 0 to 1 (0.9 for 90 %), not {value!r}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where} must be a whole number >= 0, not {value!r}")
    return value


def _mapping(value: Any, where: str) -> Mapping[Any, Any]:
    if isinstance(value, str):
        value = json.loads(value or "{}")
    if isinstance(value, list | tuple):
        value = dict.fromkeys(value, "fail")
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a dict, not {type(value).__name__}")
    return value


def _builtins(own: MonitorSettings) -> list[Monitor]:
    """The built-in monitors whose settings are set, at their levels."""
    levels = dict(_mapping(own.monitor_levels, "MONITOR_LEVELS"))
    for name, level in levels.items():
        if name not in BUILTIN_NAMES:
            raise ConfigError(
                f"MONITOR_LEVELS: no built-in monitor {name!r} (they are "
                f"{', '.join(BUILTIN_NAMES)}; a monitor of MONITORS has its level there)"
            )
        level_of(level, f"MONITOR_LEVELS[{name!r}]")
    out: list[Monitor] = []
    value = own.monitor_min_items
    if value is not None:
        limit = _count(value, "MONITOR_MIN_ITEMS")
        out.append(StatLimit("min_items", "item_scraped_count", ">=", limit))
    if own.monitor_item_count_change is not None:
        change = _fraction(own.monitor_item_count_change, "MONITOR_ITEM_COUNT_CHANGE")
        out.append(ItemCountChange(change))
    rules = _mapping(own.monitor_field_coverage, "MONITOR_FIELD_COVERAGE")
    if rules:
        where = "MONITOR_FIELD_COVERAGE"
        checked = {str(k): _fraction(v, f"{where}[{k!r}]") for k, v in rules.items()}
        out.append(FieldCoverage(checked))
    if own.monitor_max_error_rate is not None:
        out.append(ErrorRate(_fraction(own.monitor_max_error_rate, "MONITOR_MAX_ERROR_RATE")))
    if own.monitor_finish_reasons is not None:
        out.append(FinishReason([str(r) for r in own.monitor_finish_reasons]))
    value = own.monitor_max_retries
    if value is not None:
        limit = _count(value, "MONITOR_MAX_RETRIES")
        out.append(StatLimit("max_retries", "retry/count", "<=", limit))
    value = own.monitor_max_bans
    if value is not None:
        out.append(Bans(_count(value, "MONITOR_MAX_BANS"), own.block_statuses or ()))
    for monitor in out:
        monitor.level = levels.get(monitor.name, "fail")
    return out


def spidermon_runs_itself(extensions: Mapping[Any, int | None]) -> bool:
    """Whether EXTENSIONS turns on Spidermon's own extension (by path, or its class), and
    Spidermon is installed to run it (else the path names skitter's stand-in)."""
    if not spidermon_installed():
        return False
    for spec, order in extensions.items():
        path = spec if isinstance(spec, str) else f"{spec.__module__}.{spec.__qualname__}"
        if path == SPIDERMON_EXTENSION and order is not None:
            return True
    return False


def _spidermon(own: SpidermonSettings, result: Plan) -> None:
    """skitter's monitors for SPIDERMON_* settings, unless the installed Spidermon's own
    extension runs: then its suites (a project's own ones included) are Spidermon's to
    run, and running skitter's as well would check everything twice."""
    if spidermon_runs_itself(own.extensions):
        log.info(
            "EXTENSIONS runs Spidermon's own extension: its monitor suites run as in "
            "Scrapy, and skitter adds none for the SPIDERMON_* settings"
        )
        return
    close = own.spidermon_spider_close_monitors or ()
    periodic = _mapping(own.spidermon_periodic_monitors, "SPIDERMON_PERIODIC_MONITORS")
    if not own.spidermon_enabled:
        if close or periodic:
            log.warning(
                "SPIDERMON_SPIDER_CLOSE_MONITORS or SPIDERMON_PERIODIC_MONITORS is set but "
                "SPIDERMON_ENABLED is not: Spidermon's monitors do not run, as in Spidermon"
            )
        return
    setting = "SPIDERMON_SPIDER_CLOSE_MONITORS"
    for path in close:
        result.end.extend(spidermon_monitors(own, path, setting))
    for path, seconds in periodic.items():
        where = f"SPIDERMON_PERIODIC_MONITORS[{path!r}]"
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise ConfigError(f"{where} must be seconds > 0, not {seconds!r}")
        monitors = spidermon_monitors(own, path, "SPIDERMON_PERIODIC_MONITORS")
        result.periodic.append((float(seconds), monitors))


def plan(crawler: CrawlContext) -> Plan:
    """The crawl's monitors (an empty plan when none is set)."""
    own = crawler.settings.view(MonitorSettings)
    monitors = _builtins(own)
    for spec, level in _mapping(own.monitors, "MONITORS").items():
        monitors.append(as_monitor(spec, level_of(level, f"MONITORS[{spec!r}]"), crawler))
    names = [monitor.name for monitor in monitors]
    twice = {name for name in names if names.count(name) > 1}
    if twice:
        raise ConfigError(f"MONITORS: two monitors named {sorted(twice)}; names tell them apart")
    result = Plan(end=list(monitors))
    interval = own.monitor_interval
    if interval < 0:
        raise ConfigError(f"MONITOR_INTERVAL must be seconds >= 0, not {interval}")
    during = [m for m in monitors if getattr(m, "periodic", False)]
    if interval and during:
        result.periodic.append((float(interval), during))
    elif interval:
        raise ConfigError(
            "MONITOR_INTERVAL is set, but no monitor runs during the crawl: the upper bounds "
            "(error_rate, max_retries, max_bans) do, and a MONITORS entry with periodic = True"
        )
    _spidermon(crawler.settings.view(SpidermonSettings), result)
    return result
