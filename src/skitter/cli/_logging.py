"""Where the command's log goes, by Scrapy's logging settings.

``LOG_FILE`` (with ``LOG_FILE_APPEND`` and ``LOG_ENCODING``) sends the log to a file,
whatever ``LOG_ENABLED`` says, as in Scrapy; otherwise ``LOG_ENABLED`` sends it to
stderr, or nowhere (``--nolog``). ``LOG_FORMAT`` and ``LOG_DATEFORMAT`` lay out each
record; on a terminal, left at their defaults, rich's coloured handler is used instead.
``LOG_STDOUT`` sends what the process prints to stdout into the log, at INFO, from the
``stdout`` logger. ``LOG_LEVEL`` (``-L``) filters; below INFO (``-L WARNING``) the final
stats table and the live progress line are left out too, as Scrapy's stats dump is an
INFO record.

Consoles made here never hard-wrap when their stream is not a terminal: a message piped
to a file or CI log keeps its lines whole.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from skitter.exceptions import ConfigError

__all__ = ["DEFAULT_DATEFORMAT", "DEFAULT_FORMAT", "LogOptions", "logging_to", "make_console"]

DEFAULT_FORMAT = "%(asctime)s [%(name)s] %(levelname)s: %(message)s"
DEFAULT_DATEFORMAT = "%Y-%m-%d %H:%M:%S"
_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


def make_console(*, stderr: bool = True) -> Console:
    """A console for stderr (or stdout) that wraps only for a person at a terminal."""
    console = Console(stderr=stderr)
    if not console.is_terminal:
        # rich assumes 80 columns off a terminal and wraps there: a log reader or grep
        # wants whole lines. Tables still take only the width they need.
        console = Console(stderr=stderr, soft_wrap=True, width=10_000)
    return console


@dataclass(frozen=True, slots=True)
class LogOptions:
    """The logging settings of a run, read once."""

    level: str = "INFO"
    enabled: bool = True
    file: str | None = None
    append: bool = True
    encoding: str = "utf-8"
    format: str = DEFAULT_FORMAT
    dateformat: str = DEFAULT_DATEFORMAT
    stdout: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> LogOptions:
        level = str(settings.get("LOG_LEVEL") or "INFO").upper()
        if level not in _LEVELS:
            raise ConfigError(f"LOG_LEVEL {level!r}: use one of {', '.join(_LEVELS)}")
        return cls(
            level=level,
            enabled=bool(settings.get("LOG_ENABLED", True)),
            file=str(settings.get("LOG_FILE") or "") or None,
            append=bool(settings.get("LOG_FILE_APPEND", True)),
            encoding=str(settings.get("LOG_ENCODING") or "utf-8"),
            format=str(settings.get("LOG_FORMAT") or DEFAULT_FORMAT),
            dateformat=str(settings.get("LOG_DATEFORMAT") or DEFAULT_DATEFORMAT),
            stdout=bool(settings.get("LOG_STDOUT", False)),
        )

    @property
    def visible(self) -> bool:
        """Whether the log goes anywhere at all."""
        return self.enabled or self.file is not None

    @property
    def shows_info(self) -> bool:
        """Whether INFO records (the stats table, progress) are wanted."""
        return self.visible and logging.getLevelNamesMapping()[self.level] <= logging.INFO

    @property
    def on_console(self) -> bool:
        """Whether the log is written to stderr (so live output may share it)."""
        return self.enabled and self.file is None


class _StdoutToLog(io.TextIOBase):
    """What is printed, logged line by line (Scrapy's LOG_STDOUT)."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._partial = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._logger.info("%s", line.rstrip("\r"))
        return len(text)

    def flush(self) -> None:
        if self._partial:
            self._logger.info("%s", self._partial)
            self._partial = ""


def _handler(options: LogOptions, console: Console) -> logging.Handler:
    formatter = logging.Formatter(options.format, options.dateformat)
    if options.file is not None:
        path = Path(options.file).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler: logging.Handler = logging.FileHandler(
                path, mode="a" if options.append else "w", encoding=options.encoding
            )
        except (OSError, LookupError) as exc:
            raise ConfigError(f"LOG_FILE {options.file}: cannot open it: {exc}") from None
    elif not options.enabled:
        return logging.NullHandler()  # not even Python's last-resort stderr handler
    elif console.is_terminal and (options.format, options.dateformat) == (
        DEFAULT_FORMAT,
        DEFAULT_DATEFORMAT,
    ):
        from rich.logging import RichHandler

        handler = RichHandler(
            console=console, show_path=False, rich_tracebacks=True, log_time_format="%H:%M:%S"
        )
        formatter = logging.Formatter("%(message)s")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    return handler


@contextlib.contextmanager
def logging_to(options: LogOptions, console: Console) -> Iterator[None]:
    """Set up the root logger for the run; put back stdout and close the file after."""
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    handler = _handler(options, console)
    root.addHandler(handler)
    root.setLevel(options.level)
    # aiohttp's own access/client chatter is not the user's business at INFO.
    logging.getLogger("aiohttp").setLevel(max(logging.WARNING, root.level))
    saved: TextIO = sys.stdout
    writer = _StdoutToLog(logging.getLogger("stdout")) if options.stdout else None
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
