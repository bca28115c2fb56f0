"""``skitter job DIR``: what a job directory holds, and putting failed tasks back.

It reads the database without the spider (requests stay encoded), so it works for any
job, even one whose spider file changed or is gone. A job that a crawl would refuse to
resume (damaged, emptied, a checkpoint that is not skitter's) is refused here the same
way, with the same message.
"""

from __future__ import annotations

import argparse
import datetime

from rich.console import Console
from rich.table import Table

from skitter._job import JobDir
from skitter.exceptions import ConfigError
from skitter.frontier import TaskInfo, TaskState
from skitter.http import in_domain

__all__ = ["show_job"]

EXIT_OK = 0


def _when(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S") if epoch else ""


async def show_job(args: argparse.Namespace, console: Console) -> int:
    job = JobDir(args.directory)
    if not job.database.is_file():
        raise ConfigError(f"no job in {args.directory} (expected {job.database.name})")
    frontier = job.frontier(None)
    try:
        if args.retry_failed:
            domain, reason = args.domain, args.reason

            def match(info: TaskInfo) -> bool:
                return (domain is None or in_domain(info.url, domain)) and (
                    reason is None or reason in info.reason
                )

            count = await frontier.requeue_failed(match)
            console.print(f"{count} failed tasks queued again; run the crawl to fetch them.")
        counts = await frontier.job_counts()
        table = Table(title=f"Job {args.directory}", show_header=True)
        table.add_column("state")
        table.add_column("tasks", justify="right")
        for name, value in (
            ("queued", counts.queued),
            ("in flight (reclaimed on resume)", counts.processing),
            ("succeeded", counts.succeeded),
            ("failed", counts.failed),
            ("bad", counts.bad),
        ):
            table.add_row(name, f"{value:,}")
        console.print(table)
        saved = await job.saved(frontier)
        if saved:
            start = "all" if saved.get("start_done") else "so far"
            console.print(
                f"Checkpoint: {saved.get('start_offset', 0):,} start requests queued ({start})",
                highlight=False,
            )
            for feed, size in sorted(saved.get("feeds", {}).items()):
                console.print(f"  feed {feed}: {size:,} bytes", highlight=False)
        failed = await frontier.tasks(TaskState.FAILED, args.failed)
        bad = await frontier.tasks(TaskState.BAD, args.failed)
        for title, tasks in (("Failed tasks", failed), ("Bad tasks", bad)):
            if not tasks:
                continue
            listing = Table(title=title)
            for column in ("when", "url", "attempts", "reason"):
                listing.add_column(column, overflow="fold")
            for task in tasks:
                listing.add_row(
                    _when(task.lastcrawltime), task.url, str(task.retried + 1), task.reason
                )
            console.print(listing)
    finally:
        await frontier.close()
    return EXIT_OK
