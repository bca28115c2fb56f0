"""``/metrics``: the crawl in Prometheus's text exposition format (version 0.0.4).

Three kinds of series, each with a ``project`` label:

- every numeric stats key as a counter, its name sanitized (``downloader/response_
  status_count/200`` becomes ``skitter_downloader_response_status_count_200_total``);
  the few stats that are values rather than counts (start and finish times, elapsed
  seconds, maxima) become gauges;
- project gauges: status as a state set, rate and burst, queue sizes, active tasks,
  and ``skitter_tasks{state=...}``: the tasks by where they are (``TaskCounts``:
  waiting, delayed, leased and waiting for a download slot, in flight), from the same
  read of the frontier (the stats' ``tasks/...`` values are these, so they are not
  exported twice; ``tasks/done`` is the counter ``skitter_tasks_done_total``);
- per-slot gauges, one per numeric key that ``slot_stats()`` reports (so the
  slots issue's ``queued`` or breaker fields appear without a change here); a string
  value becomes a state-set sample labelled with it.

The format wants every sample of a metric grouped under one ``# TYPE`` line, so
samples are collected per metric name over all projects before anything is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skitter.dashboard._live import LiveProject

__all__ = ["CONTENT_TYPE", "render_metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "skitter_"
STATUSES = ("new", "running", "paused", "checking", "idle", "done", "failed", "monitors_failed")

#: Stats that hold a value at a point in time, not a count that only grows.
_GAUGE_STATS = frozenset({"start_time", "finish_time", "elapsed_time_seconds"})
#: The tasks by where they are, of which ``skitter_tasks`` is the exposition.
_TASK_STATES = ("waiting", "delayed", "leased", "in_flight")
_TASK_STATS = frozenset(f"tasks/{state}" for state in _TASK_STATES)
_UNSAFE = re.compile(r"[^a-zA-Z0-9_]+")
_UNSAFE_LABEL = re.compile(r"[^a-zA-Z0-9_]+")


@dataclass
class _Family:
    kind: str  # counter | gauge
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)


class _Exposition:
    """Samples grouped by metric name, in first-seen order."""

    def __init__(self) -> None:
        self._families: dict[str, _Family] = {}
        self._seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()

    def add(self, name: str, kind: str, help_: str, labels: dict[str, str], value: Any) -> None:
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int | float):
            return
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = _Family(kind, help_)
        elif family.kind != kind:
            return  # two stats keys sanitized to one name of another kind: keep the first
        key = (name, tuple(sorted(labels.items())))
        if key in self._seen:  # e.g. "a/b" and "a_b": one series, the first wins
            return
        self._seen.add(key)
        family.samples.append((labels, float(value)))

    def render(self) -> str:
        lines: list[str] = []
        for name, family in self._families.items():
            lines.append(f"# HELP {name} {_escape_help(family.help)}")
            lines.append(f"# TYPE {name} {family.kind}")
            for labels, value in family.samples:
                lines.append(f"{name}{_labels(labels)} {_number(value)}")
        return "\n".join(lines) + "\n" if lines else ""


def metric_name(key: str, suffix: str = "") -> str:
    """A valid metric name for a stats key: ``[a-zA-Z_:][a-zA-Z0-9_:]*``."""
    body = _UNSAFE.sub("_", key).strip("_").lower() or "unnamed"
    name = PREFIX + body
    if suffix and not name.endswith(suffix):
        name += suffix
    return name


def label_name(key: str) -> str:
    body = _UNSAFE_LABEL.sub("_", key).strip("_").lower() or "value"
    return body if not body[0].isdigit() and not body.startswith("__") else "_" + body


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{key}="{_escape_value(value)}"' for key, value in labels.items())
    return "{" + inner + "}"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _is_gauge_stat(key: str) -> bool:
    return key in _GAUGE_STATS or key.endswith(("_max", "/max"))


async def render_metrics(projects: Iterable[LiveProject]) -> str:
    """The exposition text for every project the dashboard shows."""
    out = _Exposition()
    for live in projects:
        _stats(out, live, live.name)
        await _project(out, live, live.name)
        if live.status != "new":
            _slots(out, live, live.name)
    return out.render()


def _stats(out: _Exposition, crawler: LiveProject, project: str) -> None:
    labels = {"project": project}
    for key, value in crawler.stats.to_dict().items():
        if key in _TASK_STATS:
            continue
        if _is_gauge_stat(key):
            out.add(metric_name(key), "gauge", f"stats value {key}", labels, value)
        else:
            out.add(metric_name(key, "_total"), "counter", f"stats counter {key}", labels, value)


async def _project(out: _Exposition, crawler: LiveProject, project: str) -> None:
    labels = {"project": project}
    status = crawler.status
    for state in STATUSES:
        out.add(
            PREFIX + "project_status",
            "gauge",
            "1 for the project's current status "
            "(new, running, paused, checking, idle, done, failed)",
            {**labels, "status": state},
            state == status,
        )
    cluster = getattr(crawler, "cluster_summary", None)
    if cluster is not None:
        out.add(
            PREFIX + "project_workers",
            "gauge",
            "live workers of a distributed job",
            labels,
            cluster()["workers"],
        )
    rate, burst = crawler.rate
    if rate is not None:
        out.add(PREFIX + "project_rate", "gauge", "token bucket rate, tasks/s", labels, rate)
    if burst is not None:
        out.add(PREFIX + "project_burst", "gauge", "token bucket capacity", labels, burst)
    if status == "new":
        return
    counts = await crawler.queue_counts()
    for queue in ("ready", "delayed", "processing"):
        out.add(
            PREFIX + "queue_tasks",
            "gauge",
            "tasks in the project's frontier, by queue",
            {**labels, "queue": queue},
            getattr(counts, queue),
        )
    tasks = crawler.task_counts(counts)
    for state in _TASK_STATES:
        out.add(
            PREFIX + "tasks",
            "gauge",
            "tasks by where they are: waiting (due in the frontier), delayed (not due "
            "yet), leased (waiting for a download slot), in_flight (downloading or "
            "processed)",
            {**labels, "state": state},
            getattr(tasks, state),
        )
    out.add(
        PREFIX + "project_active_tasks",
        "gauge",
        "tasks being downloaded or processed",
        labels,
        tasks.in_flight,
    )


def _slots(out: _Exposition, crawler: LiveProject, project: str) -> None:
    for slot in crawler.slot_stats():
        labels = {"project": project, "slot": str(slot.get("slot", ""))}
        for key, value in slot.items():
            if key == "slot" or value is None:
                continue
            name = metric_name("slot_" + key)
            help_ = f"download slot {key}"
            if isinstance(value, str):
                out.add(name, "gauge", help_, {**labels, label_name(key): value}, 1)
            else:
                out.add(name, "gauge", help_, labels, value)
