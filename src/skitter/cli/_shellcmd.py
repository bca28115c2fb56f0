"""``skitter shell [URL|FILE]``: the interactive shell on a page the spider downloads."""

from __future__ import annotations

import argparse
import traceback

from rich.console import Console

from skitter.cli._oneshot import (
    ForUrl,
    add_common_options,
    build_crawler,
    describe_error,
    guess_url,
)

__all__ = ["add_shell_command"]


def add_shell_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "shell",
        help="try selectors interactively on a page, downloaded as the spider would",
        description="Downloads URL (or reads FILE: ./page.html) through the spider's "
        "settings and middlewares, then opens a Python shell (IPython when installed) with "
        "request, response, spider, settings, crawler, fetch(url_or_request), "
        "view(response) and shelp(). With -c, prints what CODE evaluates to and exits.",
    )
    cmd.add_argument("url", nargs="?", metavar="URL|FILE")
    cmd.add_argument("-c", dest="code", metavar="CODE", help="evaluate CODE, print it, exit")
    cmd.add_argument(
        "--no-redirect", action="store_true", help="show a 3xx response instead of following it"
    )
    add_common_options(cmd)
    cmd.set_defaults(handler=run_shell)


def run_shell(args: argparse.Namespace, console: Console) -> int:
    from skitter.shell import LoopThread, Shell  # here: a crawl never loads the shell

    crawler = build_crawler(args, console, args.spider, for_url=ForUrl(args.url))
    loop = LoopThread()
    shell = Shell(
        crawler, loop=loop, code=args.code, url_for=guess_url, describe_error=describe_error
    )
    try:
        value = shell.start(url=args.url, redirect=not args.no_redirect)
        if args.code is None:
            return 0
        if shell.error is not None:
            return 1  # the download failed (said on stderr): CODE would read no response
        print(value)
        return 0
    except Exception:
        if args.code is None:
            raise
        traceback.print_exc()
        return 1
    finally:
        try:
            shell.close()
        finally:
            loop.close()
