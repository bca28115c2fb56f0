"""``skitter crawl --processes N``: one crawl on N processes of this machine, no Redis.

The command runs as the coordinator (``skitter.multiproc.Coordinator``) and starts N
copies of itself as workers (the same arguments, with ``--worker-socket``), so that
each loads the spider and its settings exactly as the coordinator did. Ctrl-C (or
SIGTERM) tells the workers to drain and end; a second one ends them at once (with
``--job-dir`` the next run resumes what they held).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from skitter._loop import run as run_on_loop
from skitter.cli._display import ProgressDisplay
from skitter.cli._logging import LogOptions, logging_to
from skitter.cli._options import cli_settings, feeds, pairs, ui_options
from skitter.cli._project import Project
from skitter.cli._run import UiOptions, _counts_errors, finish
from skitter.cli._targets import project_spiders
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError
from skitter.settings import EngineSettings, ItemSettings
from skitter.spider import Spider

if TYPE_CHECKING:
    from skitter.multiproc import Coordinator

__all__ = ["add_processes_options", "run_processes"]

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


def processes_count(value: str) -> int:
    """``auto`` (the machine's cores) or a number of processes, 1 or more."""
    if value == "auto":
        return os.cpu_count() or 1
    try:
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a number of processes or 'auto', not {value!r}"
        ) from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"--processes must be 1 or more (or auto), not {count}")
    return count


def add_processes_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--processes",
        type=processes_count,
        metavar="N",
        help="crawl on N processes of this machine (auto: one per core), sharing the job's "
        "frontier; a host's tasks all go to one process (its politeness holds)",
    )
    cmd.add_argument("--worker-socket", help=argparse.SUPPRESS)
    cmd.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)
    cmd.add_argument("--worker-count", type=int, default=1, help=argparse.SUPPRESS)


def _refuse(spider_classes: Sequence[type[Spider]], args: argparse.Namespace, mode: str) -> None:
    if mode != "crawl":
        raise ConfigError("--processes is for skitter crawl")
    if len(spider_classes) != 1:
        raise ConfigError("--processes runs one spider; start one command per spider")


def _refuse_settings(crawler: Crawler) -> None:
    """What one process would do but N processes would not, refused before any starts."""
    if crawler.settings.view(ItemSettings).sinks:
        raise ConfigError(
            "--processes cannot write SINKS yet (each worker would open its own "
            "connections, and a sqlite: sink has no job directory there); run the crawl "
            "without --processes, or write a feed and load it"
        )
    own = crawler.settings.view(EngineSettings)
    counts = {
        "CLOSESPIDER_ITEMCOUNT": own.closespider_itemcount,
        "CLOSESPIDER_PAGECOUNT": own.closespider_pagecount,
        "CLOSESPIDER_ERRORCOUNT": own.closespider_errorcount,
    }
    if counted := [name for name, limit in counts.items() if limit]:
        raise ConfigError(
            f"--processes cannot honour {', '.join(counted)} yet (each process would count "
            "only its own pages, items or errors, and the crawl would go past the limit); "
            "run the crawl without --processes"
        )


def _crawler(
    cls: type[Spider],
    args: argparse.Namespace,
    project: Project | None,
    crawler_class: type[Crawler],
    settings: dict[str, Any],
) -> Crawler:
    spider_args: dict[str, Any] = pairs(args.spider_args, "-a")
    return crawler_class(
        cls,
        project.layer if project else None,
        cli_settings={**cli_settings(args), **settings},
        env=os.environ,
        job_dir=settings.get("JOBDIR") or args.job_dir,
        job_mode=args.job_mode,
        readers=[cls, *project_spiders(project)],
        **spider_args,
    )


#: The coordinator's options a worker leaves out (the coordinator serves the dashboard),
#: with whether each takes a value.
_COORDINATOR_ONLY = {"--processes": True, "--ui": False, "--ui-host": True, "--ui-port": True,
                     "--ui-token": True}  # fmt: skip


def worker_argv(argv: Sequence[str]) -> list[str]:
    """The command line of a worker: the coordinator's, without ``--processes`` and the
    dashboard's options."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _COORDINATOR_ONLY:
            skip = _COORDINATOR_ONLY[arg]
        elif arg.split("=", 1)[0] not in _COORDINATOR_ONLY:
            out.append(arg)
    return [*out, "--no-progress"]


def run_processes(
    spider_classes: list[type[Spider]],
    args: argparse.Namespace,
    console: Console,
    mode: str,
    project: Project | None,
) -> int:
    """The coordinator, or (with ``--worker-socket``) one of its workers."""
    _refuse(spider_classes, args, mode)
    [cls] = spider_classes
    if args.worker_socket:
        return _run_worker(cls, args, console, project)
    from skitter.multiproc import Coordinator

    wanted = feeds(args, cls.name or cls.__name__, False)
    crawler = _crawler(cls, args, project, Crawler, {"FEEDS": wanted} if wanted else {})
    _refuse_settings(crawler)
    options = LogOptions.from_settings(crawler.settings)
    socket_dir = Path(tempfile.mkdtemp(prefix="skitter-"))
    coordinator = Coordinator(crawler, args.processes, worker_argv(args.argv), socket_dir)
    with logging_to(options, console):
        stats, forced = run_on_loop(
            _coordinate(
                coordinator,
                console,
                not args.no_progress and options.on_console,
                ui_options(args, mode),
            ),
            crawler.settings.view(EngineSettings).asyncio_event_loop,
        )
        finish([crawler], [stats], args, console, options)
    socket_dir.rmdir()
    if crawler.failure is not None:
        console.print(f"[red]error:[/red] crawl failed: {crawler.failure}", highlight=False)
        return EXIT_FAILED
    return EXIT_INTERRUPTED if forced else EXIT_OK


async def _coordinate(
    coordinator: Coordinator, console: Console, progress: bool, ui: UiOptions | None
) -> tuple[dict[str, Any], bool]:
    loop = asyncio.get_running_loop()
    seen = 0

    def on_signal() -> None:
        nonlocal seen
        seen += 1
        console.print("Stopping: the workers finish what they hold (again: at once)")
        (coordinator.stop if seen == 1 else coordinator.kill)()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    display = ProgressDisplay(
        lambda: _snapshot(coordinator),
        console=console,
        interval=coordinator.crawler.settings.view(EngineSettings).logstats_interval,
        live=progress and console.is_terminal,
    )
    try:
        async with contextlib.AsyncExitStack() as stack:
            if ui is not None:
                await _serve_dashboard(stack, coordinator, console, ui)
            async with display:
                stats = await coordinator.run()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return stats, seen > 1


async def _serve_dashboard(
    stack: contextlib.AsyncExitStack, coordinator: Coordinator, console: Console, ui: UiOptions
) -> None:
    """The dashboard of the whole crawl, served by the coordinator (``--ui``)."""
    from skitter.dashboard import Dashboard
    from skitter.dashboard.wiring import ProcessesProject

    project = ProcessesProject(coordinator)
    dashboard = Dashboard([project], host=ui.host, port=ui.port, token=ui.token)
    await stack.enter_async_context(dashboard)
    login = " (log in with the --ui-token)" if ui.token else ""
    console.print(f"Dashboard: {dashboard.url}{login}", highlight=False)


def _snapshot(coordinator: Coordinator) -> dict[str, Any]:
    """The progress line's figures for the whole crawl: every worker's summed, and the
    tasks by where they are (``Coordinator.task_counts``), as one process shows them."""
    stats = coordinator.stats()
    errors = sum(v for k, v in stats.items() if _counts_errors(k) and isinstance(v, int))
    return {
        "pages": stats.get("response_received_count", 0),
        "items": stats.get("item_scraped_count", 0),
        "errors": errors,
        **dataclasses.asdict(coordinator.task_counts()),
    }


def _run_worker(
    cls: type[Spider], args: argparse.Namespace, console: Console, project: Project | None
) -> int:
    from skitter.multiproc import WorkerCrawler, run_worker

    own = {"FEEDS": {}, "JOBDIR": ""}
    crawler = _crawler(cls, args, project, WorkerCrawler, own)
    # The crawl's CONCURRENT_REQUESTS is shared out; its RATE too (``WorkerCrawler``).
    total = crawler.settings.view(EngineSettings).concurrent_requests
    own["CONCURRENT_REQUESTS"] = max(1, -(-total // args.worker_count))
    crawler = _crawler(cls, args, project, WorkerCrawler, own)
    assert isinstance(crawler, WorkerCrawler)
    crawler.job = None  # the coordinator's
    crawler.share = args.worker_count
    options = LogOptions.from_settings(crawler.settings)
    with logging_to(options, console):
        run_on_loop(
            run_worker(crawler, args.worker_socket, args.worker_index),
            crawler.settings.view(EngineSettings).asyncio_event_loop,
        )
    return EXIT_FAILED if crawler.failure is not None else EXIT_OK
