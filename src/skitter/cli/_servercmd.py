"""``skitter server [--bind 127.0.0.1] [--port 6800] [--data-dir DIR]``: the service that
deploys, runs, schedules and remembers crawls, with Scrapyd's HTTP API (see
``skitter.server``). Runs until Ctrl-C or SIGTERM; the runs it started are then stopped
and recorded as interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from rich.console import Console

from skitter.cli._dashcmd import until_signalled
from skitter.cli._logging import LogOptions, logging_to

__all__ = ["add_parser"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = commands.add_parser(
        "server",
        help="a service with Scrapyd's API: deploy projects, schedule runs, browse their history",
        description="Serves Scrapyd's HTTP API (addversion.json, schedule.json, listjobs.json, "
        "cancel.json, ...: scrapyd-client and ScrapydWeb work with it), runs each job as a "
        "local `skitter crawl` process, and keeps every run (log, items, stats, outcome) in a "
        "history its pages list and open. Without --username/--password it only listens on "
        "loopback.",
    )
    server.add_argument("--bind", default="127.0.0.1", help="address (default: %(default)s)")
    server.add_argument("--port", type=int, default=6800, help="port (default: %(default)s)")
    server.add_argument(
        "--data-dir",
        default="skitter-server",
        help="where runs, logs, items and projects are kept (default: %(default)s)",
    )
    server.add_argument("--username", help="require HTTP basic auth with this user name")
    server.add_argument(
        "--password", help="... and this password (default: $SKITTER_SERVER_PASSWORD)"
    )
    server.add_argument(
        "--max-proc", type=int, default=4, help="runs at once; others wait (default: %(default)s)"
    )
    server.add_argument(
        "--keep-runs", type=int, default=1000, help="ended runs kept (default: %(default)s)"
    )
    server.add_argument(
        "--keep-days",
        type=float,
        default=None,
        help="forget runs ended this long ago (default: never)",
    )
    server.add_argument(
        "--log-max-bytes", type=int, default=10 * 2**20,
        help="a run's log file is rotated past this size (default: %(default)s)",
    )  # fmt: skip
    server.add_argument(
        "--log-backups", type=int, default=2, help="rotated log files kept (default: %(default)s)"
    )
    server.add_argument("-L", "--loglevel", default=None, help="the service's log level (INFO)")
    server.set_defaults(handler=_cmd_server)


def _cmd_server(args: argparse.Namespace, console: Console) -> int:
    from skitter.server import ServerOptions

    options = ServerOptions(
        data_dir=Path(args.data_dir).resolve(),
        host=args.bind,
        port=args.port,
        username=args.username,
        password=args.password or os.environ.get("SKITTER_SERVER_PASSWORD") or None,
        max_proc=args.max_proc,
        keep_runs=args.keep_runs,
        keep_days=args.keep_days,
        log_max_bytes=args.log_max_bytes,
        log_backups=args.log_backups,
    )
    with logging_to(LogOptions.from_settings({"LOG_LEVEL": args.loglevel}), console):
        return asyncio.run(_serve(options, console))


async def _serve(options: object, console: Console) -> int:
    from skitter.server import Server, ServerOptions

    assert isinstance(options, ServerOptions)
    server = Server(options)
    async with server:
        console.print(f"skitter server: {server.url} (data in {options.data_dir})", highlight=False)
        await until_signalled()
    return 0
