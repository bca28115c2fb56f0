"""Running crawlers for the command line: logging, signals, progress, final report.

Shared by ``skitter crawl``, ``serve`` and ``demo``. The first Ctrl-C (or SIGTERM) stops
scheduling and lets running requests finish within SHUTDOWN_TIMEOUT; the second cancels
them at once. Either way the engine closes every pipeline, so feed files stay valid.
With ``--ui`` (always in ``serve``) the dashboard runs beside the crawl on the same event
loop, its URL printed first, and stops after the crawl.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import io
import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from skitter.cli._display import ProgressDisplay, print_stats, render_stats_table
from skitter.cli._logging import LogOptions
from skitter.crawler import Crawler, run_crawlers
from skitter.settings import EngineSettings

__all__ = ["UiOptions", "finish", "run_with_signals"]

log = logging.getLogger("skitter.cli")


@dataclass(frozen=True, slots=True)
class UiOptions:
    """Where the dashboard listens (port 0: a free one) and the token it requires."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None


async def run_with_signals(
    crawlers: list[Crawler],
    console: Console,
    progress: bool,
    mode: str = "crawl",
    ui: UiOptions | None = None,
) -> tuple[list[dict[str, Any]], bool]:
    """Run crawlers; first Ctrl-C (or SIGTERM) stops gracefully, the second at once.

    Returns the stats and whether the run was cut short by a second signal.
    """
    async with contextlib.AsyncExitStack() as stack:
        if ui is not None:
            # Imported only when asked for, so a plain `skitter crawl` never loads it.
            from skitter.dashboard import Dashboard

            projects = [crawler.control for crawler in crawlers]
            dashboard = Dashboard(projects, host=ui.host, port=ui.port, token=ui.token)
            await stack.enter_async_context(dashboard)
            login = " (log in with the --ui-token)" if ui.token else ""
            console.print(f"Dashboard: {dashboard.url}{login}", highlight=False)
        return await _run_until_signalled(crawlers, console, progress, mode)


async def _run_until_signalled(
    crawlers: list[Crawler], console: Console, progress: bool, mode: str
) -> tuple[list[dict[str, Any]], bool]:
    loop = asyncio.get_running_loop()
    signals_seen = 0
    forced = False

    def on_signal(signame: str) -> None:
        nonlocal signals_seen, forced
        signals_seen += 1
        if signals_seen == 1:
            log.warning("Received %s, shutting down gracefully. Send again to force.", signame)
            for crawler in crawlers:
                crawler.stop("shutdown")
        else:
            log.warning("Received %s twice, stopping now.", signame)
            forced = True
            task.cancel()

    task = asyncio.ensure_future(run_crawlers(crawlers, mode=mode, raise_on_failure=False))
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal, sig.name)
            installed.append(sig)
        # Not the main thread (asyncio says RuntimeError, uvloop ValueError), or Windows:
        # the run goes on without them (a test runs the command in a thread).
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    display = ProgressDisplay(
        lambda: _snapshot(crawlers),
        console=console,
        interval=crawlers[0].settings.view(EngineSettings).logstats_interval,
        live=progress and console.is_terminal,
    )
    try:
        async with display:
            try:
                stats = await task
            except asyncio.CancelledError:
                if not forced:
                    raise
                stats = [crawler.stats.to_dict() for crawler in crawlers]
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    return stats, forced


def _snapshot(crawlers: list[Crawler]) -> dict[str, Any]:
    """The figures the progress line shows, summed over the crawlers: pages, items,
    errors, and the tasks by where they are (``engine.TaskCounts``; the frontier's part
    as the engine last looked, about once a second)."""
    total: dict[str, Any] = dict.fromkeys(("pages", "items", "errors"), 0)
    for crawler in crawlers:
        stats = crawler.stats
        total["pages"] += stats.get("response_received_count", 0)
        total["items"] += stats.get("item_scraped_count", 0)
        total["errors"] += sum(
            value
            for key, value in ((k, stats.get(k)) for k in stats)
            if _counts_errors(key) and isinstance(value, int)
        )
        for field, value in dataclasses.asdict(crawler.control.task_counts()).items():
            total[field] = total.get(field, 0) + value
    return total


def _counts_errors(key: str) -> bool:
    """Whether a stats key counts errors of one class (``spider_exceptions/ValueError``,
    ``engine/failed_requests/ConnectError``), not a total or a breakdown by cause
    (``engine/failed_requests/ConnectError/Connection refused``) counted already."""
    family, _, name = key.rpartition("/")
    return family in ("spider_exceptions", "engine/failed_requests") and name != "count"


def finish(
    crawlers: list[Crawler],
    all_stats: list[dict[str, Any]],
    args: argparse.Namespace,
    console: Console,
    log_options: LogOptions,
) -> None:
    """The stats table (an INFO record, as Scrapy's stats dump: left out below INFO, and
    written into LOG_FILE when there is one) and --stats-json."""
    for crawler, stats in zip(crawlers, all_stats, strict=True):
        if not (crawler.settings.view(EngineSettings).stats_dump and log_options.shows_info):
            continue
        title = f"Stats of spider {crawler.spider.name!r}"
        if log_options.on_console:
            console.print(f"[bold]{title}[/bold]")
            print_stats(stats, console)
        else:
            buffer = io.StringIO()
            Console(file=buffer, width=10_000, color_system=None).print(
                render_stats_table(stats, title=None)
            )
            table = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
            log.info("%s:\n%s", title, table.strip("\n"))
    if args.stats_json:
        path = Path(args.stats_json)
        path.parent.mkdir(parents=True, exist_ok=True)
        data: Any = (
            all_stats[0]
            if len(all_stats) == 1
            else {c.spider.name: s for c, s in zip(crawlers, all_stats, strict=True)}
        )
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
