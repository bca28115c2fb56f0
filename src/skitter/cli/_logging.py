"""The command's log: Scrapy's LOG_* settings (``skitter._logsetup``), and consoles.

On a terminal, with LOG_FORMAT and LOG_DATEFORMAT left at their defaults, the log is
rich's coloured handler; otherwise the plain handler the settings ask for (a file,
stderr, nothing). Below INFO (``-L WARNING``), or with no log at all (``--nolog``), the
final stats table and the live progress line are left out too, as Scrapy's stats dump
is an INFO record.

Consoles made here never hard-wrap when their stream is not a terminal: a message piped
to a file or CI log keeps its lines whole.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console

from skitter._logsetup import (
    DEFAULT_DATEFORMAT,
    DEFAULT_FORMAT,
    LogOptions,
    StdoutToLog,
    plain_handler,
)

__all__ = ["LogOptions", "install_logging", "logging_to", "make_console"]


def make_console(*, stderr: bool = True) -> Console:
    """A console for stderr (or stdout) that wraps only for a person at a terminal."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        # rich assumes 80 columns off a terminal and wraps there: a log reader or grep
        # wants whole lines. Tables still take only the width they need.
        console = Console(stderr=stderr, soft_wrap=True, width=10_000)
    return console


def _handler(options: LogOptions, console: Console) -> logging.Handler:
    if (
        options.on_console
        and console.is_terminal
        and (options.format, options.dateformat) == (DEFAULT_FORMAT, DEFAULT_DATEFORMAT)
    ):
        from rich.logging import RichHandler

        handler = RichHandler(
            console=console, show_path=False, rich_tracebacks=True, log_time_format="%H:%M:%S"
        )
        handler.setFormatter(logging.Formatter("%(message)s"))
        return handler
    return plain_handler(options)


def install_logging(options: LogOptions, console: Console) -> logging.Handler:
    """Make the root logger's one handler the one ``options`` ask for; return it."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = _handler(options, console)
    root.addHandler(handler)
    root.setLevel(options.level)
    # aiohttp's own access/client chatter is not the user's business at INFO.
    logging.getLogger("aiohttp").setLevel(max(logging.WARNING, root.level))
    return handler


@contextlib.contextmanager
def logging_to(options: LogOptions, console: Console) -> Iterator[None]:
    """Set up the root logger for the run; put back stdout and close the file after."""
    root = logging.getLogger()
    handler = install_logging(options, console)
    saved: TextIO = sys.stdout
    writer = StdoutToLog(logging.getLogger("stdout")) if options.stdout else None
    if writer is not None:
        sys.stdout = writer
    try:
        yield
    finally:
        if writer is not None:
            writer.flush()
            sys.stdout = saved
        root.removeHandler(handler)
        handler.close()
