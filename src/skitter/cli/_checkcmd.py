"""``skitter check SPIDER``: run the contracts in the spider's callbacks' docstrings.

Each spider is checked with its own crawler (its settings, middlewares and scope) through
``Crawler.probe()``; pipelines and feeds are off (a contract throws the output away),
unless ``-s`` turns them on. The report is Scrapy's: unittest's, with "Ran N contracts in
Xs" and OK or FAILED (failures=, errors=); exit 1 when anything failed. ``-l`` lists the
callbacks with contracts instead. ``SCRAPY_CHECK`` is set while checking, as in Scrapy,
for spiders that behave differently under check.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from skitter.cli._oneshot import add_common_options

__all__ = ["add_check_command"]


def add_check_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "check",
        help="run the spider contracts (@url, @returns, @scrapes...) in callbacks' docstrings",
        description="Downloads each callback's @url as the spider would, and checks what "
        "the callback returns against its contracts (SPIDER_CONTRACTS adds your own). "
        "Exits 1 when a contract fails or errs.",
    )
    cmd.add_argument(
        "targets",
        nargs="*",
        metavar="SPIDER",
        help="a spider's name in the project, spider.py, spider.py:Name, or a directory "
        "(default: every spider of the project)",
    )
    cmd.add_argument("-l", "--list", action="store_true", help="list the contracts, check none")
    cmd.add_argument("-v", "--verbose", action="store_true", help="print every check")
    add_common_options(cmd, spider=False)
    cmd.set_defaults(handler=_run_check)


def _run_check(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._checkrun import run_check  # unittest and the contracts, only here

    return run_check(args, console)
