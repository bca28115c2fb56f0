"""The ``skitter`` command: parses arguments, builds settings, runs crawlers.

It only parses and presents; everything it runs is the public Python API, so what the
command does a script can do too.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape  # "[settings]" in a message is text, not markup

from skitter._job import JOB_MODES
from skitter._loop import run as run_on_loop
from skitter._version import __version__
from skitter.cli._loader import load_spiders, split_target
from skitter.cli._project import Project, load_project
from skitter.cli._redis_option import (
    add_redis_option,
    add_shards_option,
    redis_target,
    redis_url,
    target_settings,
)
from skitter.cli._run import UiOptions, finish, run_with_signals, setup_logging
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError, SkitterError
from skitter.spider import Spider

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

log = logging.getLogger("skitter.cli")


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise ConfigError(f"{flag} expects NAME=VALUE, got {value!r}")
        out[name.strip()] = rest
    return out


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skitter", description="An asyncio-native web crawling framework."
    )
    parser.add_argument("--version", action="version", version=f"skitter {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    crawl = commands.add_parser("crawl", help="run spiders from files until they finish")
    crawl.add_argument(
        "targets", nargs="+", metavar="SPIDER", help="spider.py, spider.py:Name, or a directory"
    )
    _add_run_options(crawl)
    _add_ui_options(crawl, always_on=False)

    serve = commands.add_parser(
        "serve",
        help="run every spider in a directory as a long-running service",
        description="Runs the spiders' start requests once, then keeps running: periodic "
        "@every callbacks, recrawls when a task's age expires, retries on pyspider's "
        "table. Stops cleanly on Ctrl-C or SIGTERM.",
    )
    serve.add_argument("directory", metavar="DIR", help="a directory of spider files")
    _add_run_options(serve)
    _add_ui_options(serve, always_on=True)

    worker = commands.add_parser(
        "worker",
        help="join a distributed crawl on Redis (run any number, on any machines)",
        description="Crawls with the other workers of the same --job through a shared "
        "Redis frontier: leases, dupe filter and the project's rate are shared; a worker "
        "that dies loses nothing. Workers exit once the whole cluster has been idle for "
        "WORKER_IDLE_TIMEOUT seconds (-1: wait for pushed URLs forever).",
    )
    worker.add_argument("targets", nargs=1, metavar="SPIDER", help="spider.py or spider.py:Name")
    add_redis_option(worker)
    worker.add_argument("--job", required=True, metavar="NAME", help="the crawl's name")
    add_shards_option(worker, "a new job:")
    _add_run_options(worker)
    _add_ui_options(worker, always_on=False)

    push = commands.add_parser("push", help="queue URLs for the workers of a job")
    push.add_argument("urls", nargs="+", metavar="URL")
    add_redis_option(push)
    push.add_argument("--job", required=True, metavar="NAME", help="the crawl's name")
    push.add_argument(
        "--spider", required=True, metavar="NAME", help="the spider's name (its project)"
    )
    push.add_argument("--priority", type=int, default=0)
    push.add_argument(
        "--create",
        action="store_true",
        help="create the job if it does not exist yet (else pushing to it is refused)",
    )
    add_shards_option(push, "with --create, a new job:")

    dash = commands.add_parser(
        "dashboard",
        help="the web UI of a distributed crawl: every job's workers on one Redis",
        description="Shows and steers the jobs that `skitter worker` processes run on "
        "one Redis: queues, counts, workers alive, tasks in flight, failed tasks (retry "
        "them); a rate, burst, pause or resume set here reaches every worker within "
        "about a second. Runs until Ctrl-C; the URL is printed at start.",
    )
    add_redis_option(dash)
    dash.add_argument(
        "--job",
        action="append",
        default=[],
        metavar="NAME",
        help="show this job (repeat for several; default: every job found)",
    )
    dash.add_argument(
        "--prefix", default="skitter", help="the jobs' Redis key prefix (default: %(default)s)"
    )
    dash.add_argument("--host", default="127.0.0.1", help="address (default: %(default)s)")
    dash.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    dash.add_argument(
        "--ui-token",
        metavar="TOKEN",
        help="require TOKEN for every request; needed beyond loopback (default: $SKITTER_UI_TOKEN)",
    )

    job = commands.add_parser(
        "job",
        help="show a job's state (a job directory, or a Redis job); put its failed or bad "
        "tasks back in the queue",
        description="Shows what a job holds: a job directory (skitter job DIR) or a "
        "distributed job (skitter job --redis URL --job NAME): counts by state, failed and "
        "bad tasks with their reasons. --retry-failed and --requeue-bad queue them again "
        "(those matching --domain and --reason), e.g. BAD tasks whose callback was renamed, "
        "once the code is fixed.",
    )
    job.add_argument("directory", nargs="?", metavar="DIR", help="a job directory (--job-dir)")
    add_redis_option(job)
    job.add_argument("--job", metavar="NAME", help="a distributed job's name (with its Redis)")
    job.add_argument(
        "--spider", metavar="NAME", help="with --redis: the spider (needed if several have NAME)"
    )
    job.add_argument(
        "--prefix", default="skitter", help="with --redis: the key prefix (default: %(default)s)"
    )
    job.add_argument("--failed", type=int, default=20, metavar="N", help="tasks to list per state")
    job.add_argument("--retry-failed", action="store_true", help="queue FAILED tasks again")
    job.add_argument("--requeue-bad", action="store_true", help="queue BAD tasks again")
    job.add_argument("--domain", help="only tasks on this domain (or a subdomain)")
    job.add_argument("--reason", help="only tasks whose reason contains this")

    demo = commands.add_parser("demo", help="serve the bundled demo shop on 127.0.0.1 and crawl it")
    demo.add_argument(
        "-o",
        "--output",
        default="demo-output/items.jsonl",
        help="where to write the items (default: %(default)s)",
    )
    demo.add_argument("--stats-json", metavar="FILE", help="write the final stats as JSON")
    demo.add_argument("-L", "--loglevel", default=None, help="log level (default INFO)")
    demo.add_argument("--no-progress", action="store_true", help="no live progress line")
    return parser


def _add_run_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="append items to FILE (.jsonl, .json, .csv); {name} is the spider's name",
    )
    cmd.add_argument(
        "-O",
        "--overwrite-output",
        action="append",
        default=[],
        metavar="FILE",
        help="like -o, but overwrite FILE",
    )
    cmd.add_argument(
        "-s", "--set", action="append", default=[], metavar="NAME=VALUE", help="a setting"
    )
    cmd.add_argument(
        "-a",
        dest="spider_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a spider argument",
    )
    cmd.add_argument("--stats-json", metavar="FILE", help="write the final stats as JSON")
    cmd.add_argument("-L", "--loglevel", default=None, help="log level (overrides LOG_LEVEL)")
    cmd.add_argument("--no-progress", action="store_true", help="no live progress line")
    cmd.add_argument(
        "--job-dir",
        metavar="DIR",
        help="keep the crawl's state in DIR: stop (even kill) and run again to go on",
    )
    cmd.add_argument(
        "--job-mode",
        choices=JOB_MODES,
        default="resume",
        help="when DIR holds a job: resume it (default), start fresh, or recrawl "
        "everything it knows",
    )


def _add_ui_options(cmd: argparse.ArgumentParser, always_on: bool) -> None:
    if not always_on:
        cmd.add_argument(
            "--ui", action="store_true", help="serve the dashboard while crawling (URL printed)"
        )
    cmd.add_argument("--ui-host", metavar="HOST", help="dashboard address (default 127.0.0.1)")
    cmd.add_argument("--ui-port", metavar="PORT", type=int, help="dashboard port (default: free)")
    cmd.add_argument(
        "--ui-token",
        metavar="TOKEN",
        help="require TOKEN for every dashboard request; needed beyond loopback "
        "(default: $SKITTER_UI_TOKEN, which does not by itself turn the dashboard on)",
    )


def _ui_options(args: argparse.Namespace, mode: str) -> UiOptions | None:
    """The dashboard's options: always for serve; for crawl with --ui or any --ui-*."""
    wanted = mode == "serve" or getattr(args, "ui", False)
    if not (wanted or args.ui_host or args.ui_port is not None or args.ui_token):
        return None
    token = args.ui_token or os.environ.get("SKITTER_UI_TOKEN") or None
    return UiOptions(args.ui_host or "127.0.0.1", args.ui_port or 0, token)


def _feeds(args: argparse.Namespace, spider_name: str, several: bool) -> dict[str, Any]:
    feeds: dict[str, Any] = {}
    for paths, overwrite in ((args.output, False), (args.overwrite_output, True)):
        for path in paths:
            if several and "{name}" not in path:
                raise ConfigError(f"-o {path}: with several spiders, put {{name}} in the file name")
            feeds[path.replace("{name}", spider_name)] = {"overwrite": overwrite}
    return feeds


def _project(targets: Sequence[str]) -> Project | None:
    """The spiders' project, loaded before them, so their imports of it resolve."""
    paths = [Path(split_target(target)[0]) for target in targets]
    return load_project(paths, Path.cwd(), os.environ)


def _cmd_crawl(args: argparse.Namespace, console: Console) -> int:
    project = _project(args.targets)
    spider_classes = []
    for target in args.targets:
        spider_classes.extend(load_spiders(target))
    return _run(spider_classes, args, console, "crawl", project)


def _cmd_serve(args: argparse.Namespace, console: Console) -> int:
    if not Path(args.directory).is_dir():
        raise ConfigError(f"skitter serve takes a directory of spiders: {args.directory}")
    project = _project([args.directory])
    return _run(load_spiders(args.directory), args, console, "serve", project)


def _run(
    spider_classes: list[type[Spider]],
    args: argparse.Namespace,
    console: Console,
    mode: str,
    project: Project | None,
) -> int:
    cli_settings = _pairs(args.set, "-s")
    spider_args: dict[str, Any] = _pairs(args.spider_args, "-a")
    several = len(spider_classes) > 1
    crawlers = []
    for cls in spider_classes:
        settings: dict[str, Any] = {**cli_settings, **target_settings(args)}
        feeds = _feeds(args, cls.name or cls.__name__, several)
        if feeds:
            settings["FEEDS"] = feeds
        job_dir = None
        if args.job_dir:
            job_dir = Path(args.job_dir) / (cls.name or cls.__name__) if several else args.job_dir
        crawlers.append(
            Crawler(
                cls,
                project.settings if project else None,
                cli_settings=settings,
                env=os.environ,  # the CLI edge: SKITTER_<NAME> variables are settings
                job_dir=job_dir,
                job_mode=args.job_mode,
                redis_url=getattr(args, "redis", None),
                job=getattr(args, "job", None),
                **spider_args,
            )
        )
    level = args.loglevel or crawlers[0].settings["LOG_LEVEL"]
    setup_logging(level, console)
    if project is not None:
        log.info("%s", project.describe())
    all_stats, forced = run_on_loop(
        run_with_signals(
            crawlers,
            console,
            progress=not args.no_progress,
            mode=mode,
            ui=_ui_options(args, mode),
        ),
        crawlers[0].settings["ASYNCIO_EVENT_LOOP"],
    )
    finish(crawlers, all_stats, args, console)
    failed = [crawler for crawler in crawlers if crawler.failure is not None]
    for crawler in failed:
        console.print(
            f"[red]error:[/red] crawl of spider {crawler.spider.name!r} failed: {crawler.failure}",
            highlight=False,
        )
    if failed:
        return EXIT_FAILED
    return EXIT_INTERRUPTED if forced else EXIT_OK


def _cmd_worker(args: argparse.Namespace, console: Console) -> int:
    if args.job_dir:
        raise ConfigError("a worker keeps its state in Redis: --job-dir does not apply")
    args.redis = redis_url(args)
    project = _project(args.targets)
    return _run(load_spiders(args.targets[0]), args, console, "crawl", project)


def _cmd_push(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._push import push_urls

    args.redis_target = redis_target(args)
    args.redis = args.redis_target.url
    return asyncio.run(push_urls(args, console))


def _cmd_dashboard(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._dashcmd import run_dashboard

    args.redis_target = redis_target(args)
    args.redis = args.redis_target.url
    setup_logging("INFO", console)
    return asyncio.run(run_dashboard(args, console))


def _cmd_job(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._jobcmd import show_job

    if args.directory is None and args.job is not None:
        args.redis_target = redis_target(args)  # --redis, else $SKITTER_REDIS_URL
        args.redis = args.redis_target.url
    return asyncio.run(show_job(args, console))


def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._demo import run_demo

    setup_logging(args.loglevel or "INFO", console)
    return asyncio.run(run_demo(args, console))


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    handlers = {
        "crawl": _cmd_crawl,
        "serve": _cmd_serve,
        "worker": _cmd_worker,
        "push": _cmd_push,
        "dashboard": _cmd_dashboard,
        "job": _cmd_job,
        "demo": _cmd_demo,
    }
    try:
        return handlers[args.command](args, console)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    except SkitterError as exc:  # e.g. a bad URL to push, Redis out of reach
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        # A Ctrl-C outside the crawl (while loading, or during the final report): the
        # feeds are already closed, so stopping here loses nothing.
        console.print("[yellow]interrupted[/yellow]")
        return EXIT_INTERRUPTED
