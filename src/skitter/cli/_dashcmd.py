"""``skitter dashboard [--redis URL] [--job NAME]...``: the web UI of a distributed crawl.

The workers run elsewhere; this process only reads the jobs from Redis and writes the
control record they apply (see ``skitter.dashboard._source`` and ``_cluster``). It runs
until Ctrl-C or SIGTERM; stopping it stops nothing in the crawl.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal

from rich.console import Console

__all__ = ["run_dashboard", "until_signalled"]


async def run_dashboard(args: argparse.Namespace, console: Console) -> int:
    from skitter.dashboard import Dashboard
    from skitter.dashboard.redis import ClusterSource

    token = args.ui_token or os.environ.get("SKITTER_UI_TOKEN") or None
    source = ClusterSource(args.redis_target, args.job or (), prefix=args.prefix)
    # Built before connecting: a refused --host/--ui-token combination fails at once.
    dashboard = Dashboard(
        source, host=args.host, port=args.port, token=token, clock=source.clock.time
    )
    async with source, dashboard:
        login = " (log in with the --ui-token)" if token else ""
        console.print(f"Dashboard: {dashboard.url}{login}", highlight=False)
        names = ", ".join(project.name for project in source) or "none yet"
        console.print(f"Jobs on {args.redis_target}: {names}", highlight=False)
        await until_signalled()
    return 0


async def until_signalled() -> None:
    """Until Ctrl-C or SIGTERM: how a command that serves (dashboard, practice) ends."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        await stop.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
