"""pyspider's task page, for a run: every URL the run's job directory knows, its state,
attempts, last crawl and last error, and the items the run's feed holds for it.

The tasks are read from the run's job directory (``--job-dir``) once the run has
ended: while it runs, its process owns that database, and a second reader opening it
could hold a lock the crawl waits on. Items belong to a URL when their ``url`` field is
that URL (the convention of Scrapy items and of skitter's templates); a spider whose
items name their page otherwise shows none here, and the page says how they are matched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skitter._job import JobDir
from skitter.frontier import TaskInfo, TaskState

__all__ = ["TaskView", "read_tasks"]

#: Tasks listed on a run's tasks page at most (the counts are of all of them).
TASK_LIST_LIMIT = 500


@dataclass(frozen=True, slots=True)
class TaskView:
    url: str
    state: str
    attempts: int
    last_crawl: float | None
    reason: str

    @classmethod
    def of(cls, info: TaskInfo) -> TaskView:
        return cls(
            url=info.url,
            state=info.state.name.lower().replace("success", "succeeded"),
            attempts=info.retried + (0 if info.state == TaskState.ACTIVE else 1),
            last_crawl=info.lastcrawltime or None,
            reason=info.reason,
        )


async def read_tasks(job_dir: Path, state: str | None = None) -> list[TaskView] | None:
    """The tasks of an ended run's job (``state``: active, succeeded, failed, bad), or
    None when it left no job database."""
    job = JobDir(job_dir)
    if not job.database.is_file():
        return None
    wanted = None if state is None else _STATES[state]
    frontier = job.frontier(None)
    try:
        infos = await frontier.tasks(wanted)
    finally:
        await frontier.close()
    return [TaskView.of(info) for info in infos]


_STATES = {
    "active": TaskState.ACTIVE,
    "succeeded": TaskState.SUCCESS,
    "failed": TaskState.FAILED,
    "bad": TaskState.BAD,
}
STATES = tuple(_STATES)


def items_of(items: list[dict[str, Any]], url: str) -> list[dict[str, Any]]:
    return [item for item in items if item.get("url") == url]
