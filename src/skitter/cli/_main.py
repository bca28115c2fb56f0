"""The ``skitter`` command: parses arguments, builds settings, runs crawlers.

It only parses and presents; everything it runs is the public Python API, so what the
command does a script can do too.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape  # "[settings]" in a message is text, not markup

from skitter._loop import run as run_on_loop
from skitter._version import __version__
from skitter.cli import _commands
from skitter.cli._checkcmd import add_check_command
from skitter.cli._fetchcmd import add_fetch_commands
from skitter.cli._loader import load_spiders, split_target
from skitter.cli._logging import LogOptions, logging_to, make_console
from skitter.cli._options import (
    add_run_options,
    add_ui_options,
    cli_settings,
    feeds,
    pairs,
    ui_options,
)
from skitter.cli._parsecmd import add_parse_command
from skitter.cli._procs import add_processes_options, run_processes
from skitter.cli._project import Project, load_project
from skitter.cli._projectcmds import add_project_commands
from skitter.cli._redis_option import (
    add_redis_option,
    add_shards_option,
    redis_target,
    redis_url,
    target_settings,
)
from skitter.cli._run import finish, run_with_signals
from skitter.cli._shellcmd import add_shell_command
from skitter.cli._targets import project_spiders, spiders_for
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError, SkitterError
from skitter.monitors import problem
from skitter.settings import EngineSettings, FeedSettings
from skitter.spider import Spider

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: The crawl ran, and its monitors fail what it produced (skitter.monitors).
EXIT_MONITORS = 3

log = logging.getLogger("skitter.cli")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skitter", description="An asyncio-native web crawling framework."
    )
    parser.add_argument("--version", action="version", version=f"skitter {__version__}")
    parser.add_argument(
        "--scrapy-alias",
        action="store_true",
        help="make 'import scrapy' load skitter, to run a Scrapy project unedited "
        "(first argument only; or SKITTER_SCRAPY_ALIAS=1)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    crawl = commands.add_parser(
        "crawl",
        help="run spiders until they finish: by name in a project, or from files",
        description="Runs spiders: a NAME is looked up in the project around the current "
        "directory (SPIDER_MODULES of its settings), as `scrapy crawl NAME`; a spider.py, "
        "spider.py:Name or directory is loaded from the file, as `scrapy runspider`.",
    )
    crawl.add_argument(
        "targets",
        nargs="+",
        metavar="SPIDER",
        help="a spider's name, spider.py, spider.py:Name, or a directory",
    )
    add_run_options(crawl)
    add_processes_options(crawl)
    add_ui_options(crawl, always_on=False)

    runspider = commands.add_parser(
        "runspider",
        help="run the spider of one file, as `scrapy runspider` (the same as crawl FILE)",
        description="Runs the spider defined in FILE, as `scrapy runspider FILE` does, with "
        "crawl's options (-o, -O, -a, -s, ...). A file holding several spiders needs "
        "FILE:Name; `skitter crawl` also takes spiders by name and directories.",
    )
    runspider.add_argument("targets", nargs=1, metavar="FILE", help="spider.py, or spider.py:Name")
    add_run_options(runspider)
    add_processes_options(runspider)
    add_ui_options(runspider, always_on=False)

    serve = commands.add_parser(
        "serve",
        help="run every spider in a directory as a long-running service",
        description="Runs the spiders' start requests once, then keeps running: periodic "
        "@every callbacks, recrawls when a task's age expires, retries on pyspider's "
        "table. Stops cleanly on Ctrl-C or SIGTERM.",
    )
    serve.add_argument("directory", metavar="DIR", help="a directory of spider files")
    add_run_options(serve)
    add_ui_options(serve, always_on=True)

    worker = commands.add_parser(
        "worker",
        help="join a distributed crawl on Redis (run any number, on any machines)",
        description="Crawls with the other workers of the same --job through a shared "
        "Redis frontier: leases, dupe filter and the project's rate are shared; a worker "
        "that dies loses nothing. Workers exit once the whole cluster has been idle for "
        "WORKER_IDLE_TIMEOUT seconds (-1: wait for pushed URLs forever).",
    )
    worker.add_argument(
        "targets", nargs=1, metavar="SPIDER", help="a spider's name, spider.py or spider.py:Name"
    )
    add_redis_option(worker)
    add_processes_options(worker)
    worker.add_argument("--job", required=True, metavar="NAME", help="the crawl's name")
    add_shards_option(worker, "a new job:")
    add_run_options(worker)
    add_ui_options(worker, always_on=False)

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
    _commands.add_parsers(commands)
    for add_command in (
        add_shell_command,
        add_fetch_commands,
        add_parse_command,
        add_check_command,
    ):
        add_command(commands)
    add_project_commands(commands)  # last: they must not take skitter's own names
    return parser


def _project(targets: Sequence[str]) -> Project | None:
    """The spiders' project, loaded before them, so their imports of it resolve."""
    paths = [Path(split_target(target)[0]) for target in targets]
    return load_project(paths, Path.cwd(), os.environ)


def _cmd_crawl(args: argparse.Namespace, console: Console) -> int:
    project, spider_classes = spiders_for(args.targets, cli_settings(args), os.environ, Path.cwd())
    return _run(spider_classes, args, console, "crawl", project)


def _cmd_runspider(args: argparse.Namespace, console: Console) -> int:
    """Scrapy's ``runspider``: a file only (``scrapy runspider`` refuses anything but a
    Python file), so a bare word is not looked up as a spider's name."""
    path = split_target(args.targets[0])[0]
    if Path(path).suffix not in (".py", ".pyw"):
        raise ConfigError(
            f"skitter runspider takes a spider file (spider.py), not {path!r}; "
            "to run a project's spider by name: skitter crawl NAME"
        )
    if not Path(path).is_file():
        raise ConfigError(f"no such spider file: {path}")
    return _cmd_crawl(args, console)


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
    if getattr(args, "processes", None) or getattr(args, "worker_socket", None):
        return run_processes(spider_classes, args, console, mode, project)
    from_cli = cli_settings(args)
    spider_args: dict[str, Any] = pairs(args.spider_args, "-a")
    several = len(spider_classes) > 1
    readers = [*spider_classes, *project_spiders(project)]  # a shared setting is theirs
    crawlers = []
    for cls in spider_classes:
        overrides: dict[str, Any] = {**from_cli, **target_settings(args)}
        wanted = feeds(args, cls.name or cls.__name__, several)
        if wanted:
            overrides["FEEDS"] = wanted
        job_dir = None
        if args.job_dir:
            job_dir = Path(args.job_dir) / (cls.name or cls.__name__) if several else args.job_dir
        crawlers.append(
            Crawler(
                cls,
                project.layer if project else None,
                cli_settings=overrides,
                env=os.environ,  # the CLI edge: SKITTER_<NAME> variables are settings
                job_dir=job_dir,
                job_mode=args.job_mode,
                redis_url=getattr(args, "redis", None),
                job=getattr(args, "job", None),
                readers=readers,
                **spider_args,
            )
        )
    options = LogOptions.from_settings(crawlers[0].settings)
    if options.stdout and any(
        uri in ("-", "stdout:")
        for c in crawlers
        for uri in c.settings.view(FeedSettings).feeds or {}
    ):
        raise ConfigError("LOG_STDOUT would send the items of the feed to stdout into the log")
    with logging_to(options, console):
        if project is not None:
            log.info("%s", project.describe())
        all_stats, forced = run_on_loop(
            run_with_signals(
                crawlers,
                console,
                progress=not args.no_progress and options.on_console and options.shows_info,
                mode=mode,
                ui=ui_options(args, mode),
            ),
            crawlers[0].settings.view(EngineSettings).asyncio_event_loop,
        )
        finish(crawlers, all_stats, args, console, options)
    failed = [crawler for crawler in crawlers if crawler.failure is not None]
    for crawler in failed:
        console.print(
            f"[red]error:[/red] crawl of spider {crawler.spider.name!r} failed: {crawler.failure}",
            highlight=False,
        )
    judged = [(c, why) for c in crawlers if c.failure is None and (why := problem(c.stats))]
    for crawler, why in judged:
        console.print(
            f"[red]error:[/red] spider {crawler.spider.name!r}: {escape(why)}", highlight=False
        )
    if failed:
        return EXIT_FAILED
    if judged:
        return EXIT_MONITORS
    return EXIT_INTERRUPTED if forced else EXIT_OK


def _cmd_worker(args: argparse.Namespace, console: Console) -> int:
    if args.job_dir:
        raise ConfigError("a worker keeps its state in Redis: --job-dir does not apply")
    if args.processes:
        raise ConfigError(
            "--processes shares the job directory's frontier (skitter crawl); a Redis job "
            "uses more cores by starting more `skitter worker` processes"
        )
    args.redis = redis_url(args)
    project, spider_classes = spiders_for(args.targets, cli_settings(args), os.environ, Path.cwd())
    return _run(spider_classes, args, console, "crawl", project)


def _cmd_push(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._push import push_urls

    args.redis_target = redis_target(args)
    args.redis = args.redis_target.url
    return asyncio.run(push_urls(args, console))


def _cmd_dashboard(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._dashcmd import run_dashboard

    args.redis_target = redis_target(args)
    args.redis = args.redis_target.url
    with logging_to(LogOptions(), console):
        return asyncio.run(run_dashboard(args, console))


def _cmd_job(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._jobcmd import show_job

    if args.directory is None and args.job is not None:
        args.redis_target = redis_target(args)  # --redis, else $SKITTER_REDIS_URL
        args.redis = args.redis_target.url
    return asyncio.run(show_job(args, console))


def _cmd_demo(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._demo import run_demo

    with logging_to(LogOptions.from_settings({"LOG_LEVEL": args.loglevel}), console):
        return asyncio.run(run_demo(args, console))


def main(argv: Sequence[str] | None = None) -> int:
    console = make_console()
    try:
        parser = _build_parser()
    except ConfigError as exc:  # a project's COMMANDS_MODULE that cannot be loaded
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    args = parser.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])  # --processes starts copies
    handlers = {
        "crawl": _cmd_crawl,
        "runspider": _cmd_runspider,
        "serve": _cmd_serve,
        "worker": _cmd_worker,
        "push": _cmd_push,
        "dashboard": _cmd_dashboard,
        "job": _cmd_job,
        "demo": _cmd_demo,
    }
    handler = getattr(args, "handler", None) or handlers[args.command]
    try:
        return int(handler(args, console))
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
