"""The options every crawling command shares (crawl, serve, worker), and what they mean.

``-o FILE`` / ``-O FILE`` add a feed: ``FILE:FORMAT`` names the format when the
extension does not (``-o items.dat:csv``), and ``-`` is standard output (``-o -``,
JSON lines unless a format is given: ``-o -:csv``), as in Scrapy. ``-L``, ``--logfile``
and ``--nolog`` are the command line's LOG_LEVEL, LOG_FILE and LOG_ENABLED=False.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from skitter._job import JOB_MODES
from skitter.cli._run import UiOptions
from skitter.exceptions import ConfigError
from skitter.pipelines import FEED_FORMATS

__all__ = [
    "add_log_options",
    "add_run_options",
    "add_setting_options",
    "add_ui_options",
    "cli_settings",
    "feeds",
    "pairs",
    "split_output",
    "ui_options",
]


def pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise ConfigError(f"{flag} expects NAME=VALUE, got {value!r}")
        out[name.strip()] = rest
    return out


def add_log_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("-L", "--loglevel", default=None, help="log level (overrides LOG_LEVEL)")
    cmd.add_argument("--logfile", metavar="FILE", help="log to FILE (overrides LOG_FILE)")
    cmd.add_argument(
        "--nolog", action="store_true", help="no log, no stats table (sets LOG_ENABLED=False)"
    )


def add_setting_options(cmd: argparse.ArgumentParser) -> None:
    """``-s NAME=VALUE`` (a setting) and ``-a NAME=VALUE`` (a spider argument)."""
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


def add_run_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="append items to FILE (.jsonl, .json, .csv; FILE:FORMAT names the format; - is "
        "stdout); {name} is the spider's name",
    )
    cmd.add_argument(
        "-O",
        "--overwrite-output",
        action="append",
        default=[],
        metavar="FILE",
        help="like -o, but overwrite FILE",
    )
    add_setting_options(cmd)
    cmd.add_argument("--stats-json", metavar="FILE", help="write the final stats as JSON")
    add_log_options(cmd)
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


def add_ui_options(cmd: argparse.ArgumentParser, always_on: bool) -> None:
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


def ui_options(args: argparse.Namespace, mode: str) -> UiOptions | None:
    """The dashboard's options: always for serve; for crawl with --ui or any --ui-*."""
    wanted = mode == "serve" or getattr(args, "ui", False)
    if not (wanted or args.ui_host or args.ui_port is not None or args.ui_token):
        return None
    token = args.ui_token or os.environ.get("SKITTER_UI_TOKEN") or None
    return UiOptions(args.ui_host or "127.0.0.1", args.ui_port or 0, token)


def split_output(value: str) -> tuple[str, str | None]:
    """``-o`` as a feed URI and a format (None: from the extension). A format of the
    project's own (FEED_EXPORTERS) is any name after the last ``:``; the feed's check
    refuses one that is registered nowhere."""
    uri, sep, fmt = value.rpartition(":")
    if not (sep and uri and (fmt.lower() in FEED_FORMATS or fmt.isidentifier())):
        uri, fmt = value, ""
    if uri in ("-", "stdout:") and not fmt:
        fmt = "jsonlines"  # nothing to guess it from
    return uri, fmt.lower() or None


def feeds(args: argparse.Namespace, spider_name: str, several: bool) -> dict[str, Any]:
    """FEEDS from -o and -O (they replace the settings' FEEDS, as in Scrapy)."""
    out: dict[str, Any] = {}
    for values, overwrite in ((args.output, False), (args.overwrite_output, True)):
        for value in values:
            uri, fmt = split_output(value)
            if several and uri in ("-", "stdout:"):
                raise ConfigError(f"-o {value}: several spiders would mix their items on stdout")
            if several and "{name}" not in uri:
                raise ConfigError(
                    f"-o {value}: with several spiders, put {{name}} in the file name"
                )
            options: dict[str, Any] = {"overwrite": overwrite}
            if fmt is not None:
                options["format"] = fmt
            out[uri.replace("{name}", spider_name)] = options
    return out


def cli_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The -s settings with what -L, --logfile and --nolog set."""
    overrides: dict[str, Any] = pairs(args.set, "-s") if hasattr(args, "set") else {}
    if args.loglevel:
        overrides["LOG_LEVEL"] = args.loglevel
    if args.logfile:
        overrides["LOG_FILE"] = args.logfile
    if args.nolog:
        overrides["LOG_ENABLED"] = False
    return overrides
