"""Scrapy's logging settings, applied: where the log goes and how a record looks.

``LOG_FILE`` (with ``LOG_FILE_APPEND`` and ``LOG_ENCODING``) sends the log to a file,
whatever ``LOG_ENABLED`` says, as in Scrapy; otherwise ``LOG_ENABLED`` sends it to
stderr, or nowhere. ``LOG_FORMAT`` and ``LOG_DATEFORMAT`` lay out each record;
``LOG_SHORT_NAMES`` shows skitter's loggers as ``skitter``; ``LOG_LEVEL`` filters;
``LOG_STDOUT`` sends what the process prints into the log, at
INFO, from the ``stdout`` logger. The ``skitter`` command (``cli/_logging.py``, which
adds a coloured handler on a terminal) and ``CrawlerProcess`` both use this.
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skitter.exceptions import ConfigError

__all__ = [
    "DEFAULT_DATEFORMAT",
    "DEFAULT_FORMAT",
    "LogOptions",
    "StdoutToLog",
    "configure_logging",
    "plain_handler",
]

DEFAULT_FORMAT = "%(asctime)s [%(name)s] %(levelname)s: %(message)s"
DEFAULT_DATEFORMAT = "%Y-%m-%d %H:%M:%S"
_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


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
    short_names: bool = False

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
            short_names=bool(settings.get("LOG_SHORT_NAMES", False)),
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


class StdoutToLog(io.TextIOBase):
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


class _ShortNames(logging.Formatter):
    """LOG_SHORT_NAMES: skitter's own loggers shown as ``skitter``, as Scrapy shows its
    own as ``scrapy`` (a copy of the record: other handlers see the full name)."""

    def format(self, record: logging.LogRecord) -> str:
        if record.name.startswith("skitter."):
            record = logging.makeLogRecord(record.__dict__)
            record.name = "skitter"
        return super().format(record)


def plain_handler(options: LogOptions) -> logging.Handler:
    """The handler ``options`` ask for: a file, stderr, or nothing at all."""
    kind = _ShortNames if options.short_names else logging.Formatter
    formatter = kind(options.format, options.dateformat)
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
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    return handler


def configure_logging(settings: Mapping[str, Any]) -> None:
    """Install the handler the settings ask for on the root logger, for good (what a
    script's ``CrawlerProcess`` does; the command undoes it after the run)."""
    options = LogOptions.from_settings(settings)
    root = logging.getLogger()
    root.addHandler(plain_handler(options))
    root.setLevel(options.level)
    if options.stdout:
        sys.stdout = StdoutToLog(logging.getLogger("stdout"))
