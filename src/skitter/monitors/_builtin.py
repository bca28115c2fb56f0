"""The built-in monitors, each a small check of the stats.

Those marked ``periodic`` bound something that only grows or that means the same at
any moment (errors, retries, bans, an error rate, time): they also run every
MONITOR_INTERVAL seconds, so a breach is known while the crawl runs. The others (the
item count, coverage, the finish reason) are only known at the end.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skitter.monitors._base import MonitorResult, Run
from skitter.pipelines.wiring import FIELDS, ITEMS

__all__ = [
    "Bans",
    "ErrorRate",
    "ExecutionTime",
    "FieldCoverage",
    "FinishReason",
    "HttpCodes",
    "ItemCountChange",
    "ItemCountIncrease",
    "StatLimit",
]

_OPS: Mapping[str, tuple[Callable[[Any, Any], bool], str]] = {
    "<=": (operator.le, "more than"),
    ">=": (operator.ge, "fewer than"),
}


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f} %"


@dataclass
class StatLimit:
    """A stat at most (``<=``) or at least (``>=``) ``bound``; a missing stat is 0."""

    name: str
    stat: str
    op: str
    bound: float
    level: str = "fail"

    @property
    def periodic(self) -> bool:
        return self.op == "<="  # an upper bound broken now stays broken

    def check(self, run: Run) -> str | None:
        value = run.stats.get(self.stat, 0)
        test, words = _OPS[self.op]
        if test(value, self.bound):
            return None
        return f"{self.stat} is {value}, {words} {self.bound:g}"


@dataclass
class ItemCountChange:
    """The item count within ``fraction`` of the last comparable run's."""

    fraction: float
    level: str = "fail"
    name: str = "item_count_change"
    periodic: bool = False

    def check(self, run: Run) -> MonitorResult | str | None:
        count = int(run.stats.get("item_scraped_count", 0))
        previous = run.previous
        if previous is None:
            return MonitorResult(
                self.name, "skipped", "no earlier finished run to compare with", self.level
            )
        before = previous.items
        change = (count - before) / before if before else (0.0 if not count else float("inf"))
        if abs(change) <= self.fraction:
            return None
        return (
            f"{count} items, {change * 100:+.1f} % from the {before} of the last run "
            f"(at most {self.fraction * 100:g} % either way)"
        )


@dataclass
class FieldCoverage:
    """Each rule's field filled in at least its fraction of the items: ``field`` over
    every item, ``Class/field`` (``Class/a/b`` for nested dicts) over that class's."""

    rules: Mapping[str, float]
    skip_without_items: bool = False
    level: str = "fail"
    name: str = "field_coverage"
    periodic: bool = False

    def check(self, run: Run) -> MonitorResult:
        stats = run.stats
        if self.skip_without_items and not any(k.startswith(ITEMS) and stats[k] for k in stats):
            return MonitorResult(self.name, "skipped", "no items were scraped", self.level)
        short: list[str] = []
        details: dict[str, Any] = {}
        for rule, minimum in self.rules.items():
            actual, total = _coverage_of(stats, rule)
            details[rule] = {"coverage": actual, "min": minimum, "items": total}
            if actual < minimum:
                short.append(
                    f"{rule} filled in {_percent(actual)} of {total} items "
                    f"(min {_percent(minimum)})"
                )
        if short:
            return MonitorResult(self.name, "failed", "; ".join(short), self.level, details)
        return MonitorResult(self.name, "passed", "", self.level, details)


def _coverage_of(stats: Mapping[str, Any], rule: str) -> tuple[float, int]:
    """(fraction, items) for a coverage rule: over one class, or over all items."""
    if "/" in rule:
        kind = rule.split("/", 1)[0]
        total = int(stats.get(ITEMS + kind, 0))
        count = int(stats.get(FIELDS + rule, 0))
    else:
        kinds = [key[len(ITEMS) :] for key in stats if key.startswith(ITEMS)]
        total = sum(int(stats[ITEMS + kind]) for kind in kinds)
        count = sum(int(stats.get(f"{FIELDS}{kind}/{rule}", 0)) for kind in kinds)
    return (count / total if total else 0.0), total


@dataclass
class ErrorRate:
    """At most ``maximum`` of the downloads ended in an exception or a status >= 400."""

    maximum: float
    level: str = "fail"
    name: str = "error_rate"
    periodic: bool = True

    def check(self, run: Run) -> MonitorResult | str | None:
        stats = run.stats
        prefix = "downloader/response_status_count/"
        bad = sum(
            int(count)
            for key, count in stats.items()
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
            and int(key[len(prefix) :]) >= 400
        )  # fmt: skip
        exceptions = int(stats.get("downloader/exception_count", 0))
        total = int(stats.get("downloader/response_count", 0)) + exceptions
        if not total:
            return None
        rate = (bad + exceptions) / total
        if rate <= self.maximum:
            return None
        return (
            f"{bad + exceptions} of {total} downloads failed ({_percent(rate)}, at most "
            f"{_percent(self.maximum)})"
        )


@dataclass
class FinishReason:
    """The crawl ended for one of ``reasons``."""

    reasons: Iterable[str]
    level: str = "fail"
    name: str = "finish_reason"
    periodic: bool = False

    def check(self, run: Run) -> str | None:
        reason = run.stats.get("finish_reason")
        wanted = list(self.reasons)
        return None if reason in wanted else f"finished with {reason!r}, not one of {wanted}"


@dataclass
class Bans:
    """At most ``maximum`` responses with a block status (BLOCK_STATUSES)."""

    maximum: int
    statuses: Iterable[int]
    level: str = "fail"
    name: str = "max_bans"
    periodic: bool = True

    def check(self, run: Run) -> str | None:
        counts = {
            status: int(run.stats.get(f"downloader/response_status_count/{status}", 0))
            for status in self.statuses
        }
        total = sum(counts.values())
        if total <= self.maximum:
            return None
        shown = ", ".join(f"{n} x {status}" for status, n in counts.items() if n)
        return f"{total} responses were blocks ({shown}), more than {self.maximum}"


@dataclass
class HttpCodes:
    """Spidermon's UnwantedHTTPCodesMonitor: per code, at most a count, or a fraction
    of the requests ({'max_count': n, 'max_percentage': f}, the smaller)."""

    limits: Mapping[int, Any]
    level: str = "fail"
    name: str = "UnwantedHTTPCodesMonitor"
    periodic: bool = True
    default: int = 10

    def check(self, run: Run) -> str | None:
        requests = int(run.stats.get("downloader/request_count", 0))
        over = []
        for code, limit in self.limits.items():
            count = int(run.stats.get(f"downloader/response_status_count/{code}", 0))
            most = self._most(limit, requests)
            if count > most:
                over.append(f"{count} responses with status {code} (at most {most})")
        return "; ".join(over) or None

    def _most(self, limit: Any, requests: int) -> int:
        if not isinstance(limit, Mapping):
            return int(limit)
        count, share = limit.get("max_count"), limit.get("max_percentage")
        if not count and not share:
            return self.default
        by_share = int(share * requests) if share else requests
        return min(int(count or requests), by_share)


@dataclass
class ExecutionTime:
    """The crawl has run at most ``seconds``."""

    seconds: float
    level: str = "fail"
    name: str = "PeriodicExecutionTimeMonitor"
    periodic: bool = True

    def check(self, run: Run) -> str | None:
        if run.elapsed <= self.seconds:
            return None
        return f"the crawl has run {run.elapsed:.0f} s, more than {self.seconds:g} s"


@dataclass
class ItemCountIncrease:
    """Each period adds at least ``increase`` items (Spidermon's
    PeriodicItemCountMonitor); the count is remembered between runs."""

    increase: int
    level: str = "fail"
    name: str = "PeriodicItemCountMonitor"
    periodic: bool = True
    _last: int = field(default=0, repr=False)

    def check(self, run: Run) -> str | None:
        count = int(run.stats.get("item_scraped_count", 0))
        added, self._last = count - self._last, count
        if added >= self.increase:
            return None
        return f"{added} items since the last check, fewer than {self.increase}"
