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
import logging
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from skitter.cli._display import ProgressDisplay, print_stats
from skitter.crawler import Crawler, run_crawlers

__all__ = ["UiOptions", "finish", "run_with_signals", "setup_logging"]

log = logging.getLogger("skitter.cli")


@dataclass(frozen=True, slots=True)
class UiOptions:
    """Where the dashboard listens (port 0: a free one) and the token it requires."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None


def setup_logging(level: str, console: Console) -> None:
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    if console.is_terminal:
        from rich.logging import RichHandler

        handler: logging.Handler = RichHandler(
            console=console, show_path=False, rich_tracebacks=True, log_time_format="%H:%M:%S"
        )
        handler.setFormatter(logging.Formatter("%(message)s"))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s [%(name)s] %(levelname)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level.upper())
    # aiohttp's own access/client chatter is not the user's business at INFO.
    logging.getLogger("aiohttp").setLevel(max(logging.WARNING, root.level))


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
        except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
            pass
    display = ProgressDisplay(
        lambda: _snapshot(crawlers),
        console=console,
        interval=crawlers[0].settings["LOGSTATS_INTERVAL"],
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
    """The figures the progress line shows, summed over the crawlers."""
    total: dict[str, Any] = {"pages": 0, "items": 0, "errors": 0, "queued": 0, "in_flight": 0}
    for crawler in crawlers:
        stats = crawler.stats
        total["pages"] += stats.get("response_received_count", 0)
        total["items"] += stats.get("item_scraped_count", 0)
        total["errors"] += sum(
            value
            for key, value in ((k, stats.get(k)) for k in stats)
            if key.startswith(("spider_exceptions/", "engine/failed_requests/"))
            and key != "spider_exceptions/count"
            and isinstance(value, int)
        )
        engine = crawler.engine
        if engine is not None:
            total["in_flight"] = engine.in_flight
            total["queued"] = sum(p.scheduler.backlog for p in engine.projects)
    return total


def finish(
    crawlers: list[Crawler],
    all_stats: list[dict[str, Any]],
    args: argparse.Namespace,
    console: Console,
) -> None:
    for crawler, stats in zip(crawlers, all_stats, strict=True):
        if crawler.settings["STATS_DUMP"]:
            console.print(f"[bold]Stats of spider {crawler.spider.name!r}[/bold]")
            print_stats(stats, console)
    if args.stats_json:
        path = Path(args.stats_json)
        path.parent.mkdir(parents=True, exist_ok=True)
        data: Any = (
            all_stats[0]
            if len(all_stats) == 1
            else {c.spider.name: s for c, s in zip(crawlers, all_stats, strict=True)}
        )
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
