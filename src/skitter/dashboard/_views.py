"""What the dashboard shows of a project, as plain JSON-ready dicts.

Every function here reads a project's ``LiveProject`` surface (``status``, ``rate``,
``monitor``, ``queue_counts()``, ``failed_tasks()``, ``slot_stats()``) and returns dicts
of strings and numbers; none of them changes anything. Keeping the views apart from the
HTTP handlers means the JSON API, the page and ``/metrics`` all describe a project the
same way, and the views can be tested without a server.

Crawled strings (URLs, reasons, slot names) are passed through untouched: escaping is
the job of whoever renders them, and the page does it by building DOM text nodes. Only
credentials in a URL (``https://user:pass@host/``) are masked, and any a failure reason
quotes.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from skitter._secrets import mask_page_url, mask_text
from skitter.engine import TaskCounts

if TYPE_CHECKING:
    from skitter.dashboard._live import LiveProject
    from skitter.engine import ActiveTask, Outcome
    from skitter.frontier import TaskInfo

__all__ = ["SERIES_MINUTES", "project_detail", "project_summary"]

#: Minutes of pages/s history each project summary carries (10-second buckets).
SERIES_MINUTES = 5
#: Outcomes listed per project in ``recent`` and ``failures`` (the monitor keeps 100).
OUTCOME_LIMIT = 50
#: Failed tasks listed per project.
FAILED_LIMIT = 100

#: Windows of success/failure counts, pyspider's three: 5 minutes, 1 hour, all time.
_WINDOWS: tuple[tuple[str, float | None], ...] = (("5m", 300.0), ("1h", 3600.0), ("all", None))


def _is_live(project: LiveProject) -> bool:
    """True once the project runs (or has run)."""
    return project.status != "new"


async def project_summary(project: LiveProject) -> dict[str, Any]:
    """One row of the projects table: status, rate, queues, the tasks by where they
    are (``tasks``; ``active`` is their ``in_flight``), counters, pages/s."""
    rate, burst = project.rate
    limits = project.limits
    summary: dict[str, Any] = {
        "name": project.name,
        "status": project.status,
        "rate": rate,
        "burst": burst,
        "max_rate": limits.max_rate,
        "max_burst": limits.max_burst,
        "queue": {"ready": 0, "delayed": 0, "processing": 0},
        # waiting, delayed, leased (waiting for a slot), in flight, done: TaskCounts
        "tasks": dataclasses.asdict(TaskCounts()),
        "counts": {key: {"success": 0, "failure": 0} for key, _ in _WINDOWS},
        "pages_per_second": [],
        "speed": 0.0,
        "active": 0,
        "items": project.stats.get("item_scraped_count", 0),
        # recrawled pages the server said had not changed (a 304 to their validators)
        "unchanged": project.stats.get("recrawl/unchanged", 0),
        "started": project.stats.get("start_time"),
        "finish_reason": project.stats.get("finish_reason"),
        "finish_error": project.stats.get("finish_error"),
    }
    cluster = getattr(project, "cluster_summary", None)
    if cluster is not None:  # a job of a distributed crawl: its name and live workers
        summary.update(cluster())
    if not _is_live(project):
        return summary
    counts = await project.queue_counts()
    summary["queue"] = {
        "ready": counts.ready,
        "delayed": counts.delayed,
        "processing": counts.processing,
    }
    tasks = project.task_counts(counts)
    summary["tasks"] = dataclasses.asdict(tasks)
    summary["active"] = tasks.in_flight
    monitor = project.monitor
    if monitor is not None:
        for key, seconds in _WINDOWS:
            success, failure = monitor.counts(seconds)
            summary["counts"][key] = {"success": success, "failure": failure}
        # The monitor's last bucket is still filling; drawing it would make every chart
        # dip at its right edge, so the series ends at the last complete bucket.
        series = monitor.pages_per_second(SERIES_MINUTES)[:-1]
        summary["pages_per_second"] = series
        summary["speed"] = series[-1] if series else 0.0
    return summary


async def project_detail(project: LiveProject) -> dict[str, Any]:
    """The panels below the table for one project: active tasks, recent results,
    recent failures, failed tasks, download slots, proxies (PROXY_LIST) and the
    monitors' latest results (with the run report's status)."""
    detail: dict[str, Any] = {
        "name": project.name,
        # all of them: ``active`` may list only some (a job's: each worker's oldest 50)
        "in_flight": 0,
        "active": [],
        "recent": [],
        "failures": [],
        "failed_tasks": [],
        "slots": [],
        "proxies": [],
        "monitors": [],
        "report": None,
    }
    report = getattr(project, "report", None)  # the run report, when monitors ran
    if report is not None:
        detail["monitors"] = [dict(m) for m in report["monitors"]]
        detail["report"] = {"status": report["status"], "final": report["final"]}
    if not _is_live(project):
        return detail
    now = project.clock.time()
    detail["in_flight"] = project.task_counts().in_flight
    monitor = project.monitor
    if monitor is not None:
        active = sorted(monitor.active.values(), key=lambda task: task.started)
        detail["active"] = [_active(task, now) for task in active]
        detail["recent"] = [_outcome(o) for o in _newest(monitor.recent)]
        detail["failures"] = [_outcome(o) for o in _newest(monitor.failures)]
    detail["failed_tasks"] = [_failed(t) for t in await project.failed_tasks(FAILED_LIMIT)]
    detail["slots"] = [dict(slot) for slot in project.slot_stats()]
    detail["proxies"] = [dict(proxy) for proxy in project.proxy_stats()]
    return detail


def _newest(outcomes: Any) -> list[Outcome]:
    """The last OUTCOME_LIMIT outcomes of a deque, newest first."""
    out = list(outcomes)[-OUTCOME_LIMIT:]
    out.reverse()
    return out


def _active(task: ActiveTask, now: float) -> dict[str, Any]:
    return {
        "taskid": task.taskid,
        "url": _url(task.url),
        "slot": task.slot,
        "attempt": task.attempt,
        "started": task.started,
        "elapsed": max(0.0, now - task.started),
    }


def _outcome(outcome: Outcome) -> dict[str, Any]:
    return {
        "taskid": outcome.taskid,
        "url": _url(outcome.url),
        "ok": outcome.ok,
        "status": outcome.status,
        "reason": mask_text(outcome.reason),
        "items": outcome.items,
        "at": outcome.at,
    }


def _failed(task: TaskInfo) -> dict[str, Any]:
    return {
        "taskid": task.taskid,
        "url": _url(task.url),
        "domain": host_of(task.url),
        "state": task.state.name.lower(),
        "retried": task.retried,
        "lastcrawltime": task.lastcrawltime,
        "reason": mask_text(task.reason),
    }


def _url(url: str) -> str:
    return mask_page_url(url) if "@" in url else url


def host_of(url: str) -> str:
    """The URL's host (what ``retry_failed(domain=...)`` matches), or "" if it has none."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:  # a malformed URL in the store must not break the whole view
        return ""
