"""``skitter server [--bind 127.0.0.1] [--port 6800] [--data-dir DIR]``: the service that
deploys, runs, schedules and remembers crawls, with Scrapyd's HTTP API (see
``skitter.server``). Runs until Ctrl-C or SIGTERM; the runs it started are then stopped
and recorded as interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
from pathlib import Path
from typing import Any

from rich.console import Console

from skitter._tasks import Background
from skitter.cli._dashcmd import until_signalled
from skitter.cli._logging import LogOptions, logging_to
from skitter.cli._redis_option import REDIS_URL_ENV, add_redis_option, redis_url
from skitter.exceptions import ConfigError

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
    server.add_argument(
        "--redis",
        nargs="?",
        const="",
        metavar="URL",
        default=None,
        help="dispatch runs to `skitter agent` processes on this Redis (--redis alone: "
        f"${REDIS_URL_ENV}, which keeps a password off the command line)",
    )
    server.add_argument(
        "--agent-timeout", type=float, default=30.0,
        help="with --redis: an agent silent this long is given up (default: %(default)s s)",
    )  # fmt: skip
    server.add_argument("-L", "--loglevel", default=None, help="the service's log level (INFO)")
    server.set_defaults(handler=_cmd_server)
    _add_agent_parser(commands)


def _add_agent_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = commands.add_parser(
        "agent",
        help="crawl the runs a `skitter server --redis` dispatches (run one per machine)",
        description="Takes the runs that `skitter server --redis URL` dispatches: fetches "
        "each run's project version from Redis, starts --workers `skitter worker` processes "
        "for its job and reports them back. Runs until Ctrl-C or SIGTERM.",
    )
    add_redis_option(agent)
    agent.add_argument(
        "--workers", type=int, default=1, help="workers per run on this machine (default: 1)"
    )
    agent.add_argument(
        "--max-runs", type=int, default=4, help="runs at once on this machine (default: 4)"
    )
    agent.add_argument(
        "--dir", default="skitter-agent", help="where code and worker stats are kept "
        "(default: %(default)s)",
    )  # fmt: skip
    agent.add_argument("--name", default=None, help="this agent's name (default: host:pid)")
    agent.add_argument("-L", "--loglevel", default=None, help="the agent's log level (INFO)")
    agent.set_defaults(handler=_cmd_agent)


def _cmd_agent(args: argparse.Namespace, console: Console) -> int:
    from skitter.server.wiring import Agent

    if args.redis_cluster or args.redis_sentinel:
        raise ConfigError(
            "skitter agent takes a single Redis (no --redis-cluster or --redis-sentinel yet)"
        )
    agent = Agent(
        redis_url(args),
        Path(args.dir).resolve(),
        name=args.name or f"{socket.gethostname()}:{os.getpid()}",
        workers=args.workers,
        max_runs=args.max_runs,
    )
    with logging_to(LogOptions.from_settings({"LOG_LEVEL": args.loglevel}), console):
        return asyncio.run(_run_agent(agent, console))


async def _run_agent(agent: Any, console: Console) -> int:
    """Run ``agent`` until it ends or a signal asks it to stop (it then finishes the
    round at hand)."""
    stop = asyncio.Event()

    async def stop_when_signalled() -> None:
        await until_signalled()
        stop.set()

    signals = Background("skitter-agent-signals")
    signals.start(stop_when_signalled())
    console.print(f"skitter agent {agent.name}: taking runs", highlight=False)
    try:
        await agent.run(stop)
    finally:
        await signals.stop()
    return 0


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
        redis_url=None if args.redis is None else redis_url(args),
        agent_timeout=args.agent_timeout,
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
