"""``skitter job``: what a job holds, and putting its failed or bad tasks back.

Two kinds of job, one command: a job directory (``skitter job DIR``, the SQLite job of
``--job-dir``) or a distributed job in Redis (``skitter job --redis URL --job NAME``).
Either way it reads the tasks without the spider (requests stay encoded), so it works
for any job, even one whose spider file changed or is gone: BAD tasks whose callback was
renamed can be queued again once the code is fixed (``--requeue-bad``), and the crawl
(or the workers) then decode them with the new code. A job directory that a crawl would
refuse to resume (damaged, emptied, a checkpoint that is not skitter's) is refused here
the same way, with the same message.
"""

from __future__ import annotations

import argparse
import datetime
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from skitter._job import JobDir
from skitter._secrets import mask_text
from skitter.exceptions import ConfigError, JobStateLost
from skitter.frontier import JobStore, TaskInfo, TaskState
from skitter.http import in_domain

if TYPE_CHECKING:
    from skitter.redis import RedisTarget

__all__ = ["show_job"]

EXIT_OK = 0


def _when(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S") if epoch else ""


def _check(args: argparse.Namespace) -> None:
    """One kind of job, named completely; filters only with an action to filter."""
    redis = args.redis is not None or args.job is not None or args.spider is not None
    if args.directory and redis:
        raise ConfigError("skitter job takes a job directory or --redis URL --job NAME, not both")
    if not args.directory and not (args.redis and args.job):
        raise ConfigError("skitter job needs a job directory, or --redis URL and --job NAME")
    if (args.domain or args.reason) and not (args.retry_failed or args.requeue_bad):
        raise ConfigError("--domain and --reason choose what --retry-failed or --requeue-bad queue")
    if args.failed < 0:
        raise ConfigError(f"--failed takes a number of tasks >= 0, got {args.failed}")


async def show_job(args: argparse.Namespace, console: Console) -> int:
    _check(args)
    if args.directory:
        await _show_directory(args, console)
    else:
        await _show_redis(args, console)
    return EXIT_OK


async def _show_directory(args: argparse.Namespace, console: Console) -> None:
    job = JobDir(args.directory)
    if not job.database.is_file():
        raise ConfigError(f"no job in {args.directory} (expected {job.database.name})")
    frontier: JobStore = job.frontier(None)  # through the persistence seam only
    domain, reason = args.domain, args.reason

    def match(info: TaskInfo) -> bool:
        return (domain is None or in_domain(info.url, domain)) and (
            reason is None or reason in info.reason
        )

    try:
        for wanted, state, what in (
            (args.retry_failed, TaskState.FAILED, "failed"),
            (args.requeue_bad, TaskState.BAD, "bad"),
        ):
            if wanted:
                count = await frontier.requeue(match, states=(state,))
                console.print(f"{count} {what} tasks queued again; run the crawl to fetch them.")
        counts = await frontier.job_counts()
        _counts_table(
            console,
            f"Job {args.directory}",
            [
                ("queued", counts.queued),
                ("leased (reclaimed on resume)", counts.processing),
                ("succeeded", counts.succeeded),
                ("failed", counts.failed),
                ("bad", counts.bad),
            ],
        )
        saved = await job.saved(frontier)
        if saved:
            start = "all" if saved.get("start_done") else "so far"
            console.print(
                f"Checkpoint: {saved.get('start_offset', 0):,} start requests queued ({start})",
                highlight=False,
            )
            for feed, size in sorted(saved.get("feeds", {}).items()):
                console.print(f"  feed {feed}: {size:,} bytes", highlight=False)
        _listings(
            console,
            await frontier.tasks(TaskState.FAILED, args.failed),
            await frontier.tasks(TaskState.BAD, args.failed),
        )
    finally:
        await frontier.close()


async def _show_redis(args: argparse.Namespace, console: Console) -> None:
    from skitter.frontier.redis import ShardedRedisFrontier

    project = args.spider or await _find_project(args.redis_target, args.job, args.prefix)
    frontier = ShardedRedisFrontier(
        args.redis_target,
        project=project,
        job=args.job,
        key_prefix=args.prefix,
        kind=None,
        shards=None,
        create=False,
    )
    try:
        try:
            await frontier.open_job()
        except JobStateLost as exc:
            raise JobStateLost(f"{exc} (nothing to show: no state in Redis)") from None
        now = time.time()
        for wanted, what, requeue in (
            (args.retry_failed, "failed", frontier.retry_failed),
            (args.requeue_bad, "bad", frontier.requeue_bad),
        ):
            if wanted:
                count = await requeue(now, domain=args.domain, reason=args.reason)
                console.print(
                    f"{count} {what} tasks queued again; the job's workers fetch them "
                    "(start one if none is running)."
                )
        counts = await frontier.counts(now)
        failed, bad, aside_kept = await frontier.finished_counts()
        moved, dropped = await frontier.quarantine_counts()
        _counts_table(
            console,
            f"Job {args.job!r} of spider {project!r} on {frontier.where} (epoch {frontier.epoch})",
            [
                ("waiting (due)", counts.ready),
                ("delayed", counts.delayed),
                ("leased (waiting for a slot, or in flight)", counts.processing),
                ("failed", int(failed)),
                ("bad", int(bad)),
                ("moved aside as unreadable", moved),
                ("  of which kept in the bad hash", int(aside_kept)),
                ("  of which dropped (REDIS_BAD_MAX)", dropped),
            ],
        )
        _listings(
            console,
            await frontier.tasks(TaskState.FAILED, args.failed),
            await frontier.tasks(TaskState.BAD, args.failed),
        )
    finally:
        await frontier.close()


async def _find_project(target: RedisTarget, job: str, prefix: str) -> str:
    """The spider (project) whose job is called ``job``, when there is exactly one."""
    from skitter.redis import REDIS_ERRORS, JobKeys

    caught: tuple[type[Exception], ...] = (*REDIS_ERRORS, OSError)

    client = target.client()
    found: set[str] = set()
    try:
        async for key in client.scan_iter(match=JobKeys.pattern("meta", job, prefix), count=1000):
            parsed = JobKeys.parse(key, prefix, name="meta")
            if parsed is not None and parsed[1] == job:
                found.add(parsed[0])
    except caught as exc:
        raise ConfigError(f"cannot reach Redis at {target}: {mask_text(str(exc))}") from None
    finally:
        await client.aclose()
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ConfigError(f"no job {job!r} in Redis at {target} (pass --spider if it is lost)")
    names = ", ".join(sorted(found))
    raise ConfigError(f"several spiders have a job {job!r} ({names}): pass --spider NAME")


def _counts_table(console: Console, title: str, rows: Sequence[tuple[str, int]]) -> None:
    table = Table(title=title, show_header=True)
    table.add_column("state")
    table.add_column("tasks", justify="right")
    for name, value in rows:
        table.add_row(name, f"{value:,}")
    console.print(table)


def _listings(console: Console, failed: list[TaskInfo], bad: list[TaskInfo]) -> None:
    for title, tasks in (("Failed tasks", failed), ("Bad tasks", bad)):
        if not tasks:
            continue
        listing = Table(title=title)
        for column in ("when", "url", "attempts", "reason"):
            listing.add_column(column, overflow="fold")
        for task in tasks:
            listing.add_row(_when(task.lastcrawltime), task.url, str(task.retried + 1), task.reason)
        console.print(listing)
