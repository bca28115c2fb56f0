"""Scrapy's ``scrapy.utils.log``: the root log handler a script installs and replaces.

``configure_logging(settings)`` routes warnings into the log and, unless told not to,
installs *the* root handler the settings ask for (LOG_FILE, LOG_ENABLED, LOG_FORMAT,
LOG_LEVEL on the handler, ...; ``skitter._logsetup`` reads them, as the ``skitter``
command and ``CrawlerProcess`` do). There is one such handler at a time: installing
another removes the previous one, so calling it twice never logs every line twice.
``get_scrapy_root_handler()`` is the handler installed (None: none).
``failure_to_exc_info(failure)`` is a Failure as a log record's ``exc_info``.
"""

from __future__ import annotations

import logging
import sys
from collections import abc as _abc
from typing import TYPE_CHECKING, Any

from skitter import _logsetup
from skitter import settings as _settings

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "configure_logging",
    "failure_to_exc_info",
    "get_scrapy_root_handler",
    "install_scrapy_root_handler",
]

_root_handler: logging.Handler | None = None


def configure_logging(
    settings: _abc.Mapping[str, Any] | None = None, install_root_handler: bool = True
) -> None:
    """Send warnings to the log and, with ``install_root_handler``, install the root
    handler ``settings`` (a ``Settings``, a dict, or None: the defaults) describe."""
    logging.captureWarnings(True)
    resolved = (
        settings
        if isinstance(settings, _settings.Settings)
        else _settings.Settings.resolve(settings)
    )
    if _logsetup.LogOptions.from_settings(resolved).stdout:
        sys.stdout = _logsetup.StdoutToLog(logging.getLogger("stdout"))
    if install_root_handler:
        install_scrapy_root_handler(resolved)


def install_scrapy_root_handler(settings: _abc.Mapping[str, Any]) -> None:
    """Replace the installed root handler by the one ``settings`` ask for; the root
    logger lets every record through, the handler filters by LOG_LEVEL."""
    global _root_handler
    _uninstall_scrapy_root_handler()
    options = _logsetup.LogOptions.from_settings(settings)
    handler = _logsetup.plain_handler(options)
    handler.setLevel(options.level)
    logging.root.setLevel(logging.NOTSET)
    logging.root.addHandler(handler)
    _root_handler = handler


def get_scrapy_root_handler() -> logging.Handler | None:
    """The root handler ``configure_logging`` installed, if one is."""
    return _root_handler


def _uninstall_scrapy_root_handler() -> None:
    """Remove (and close) the installed root handler, if any."""
    global _root_handler
    if _root_handler is not None:
        logging.root.removeHandler(_root_handler)
        _root_handler.close()
        _root_handler = None


def failure_to_exc_info(
    failure: Any,
) -> tuple[type[BaseException], BaseException, TracebackType | None] | None:
    """``(type, value, traceback)`` of a Failure (skitter's or Twisted's), for
    ``logger.error(..., exc_info=...)``; None for anything else."""
    value = getattr(failure, "value", None)
    if not isinstance(value, BaseException) or not callable(getattr(failure, "check", None)):
        return None
    get_tb = getattr(failure, "getTracebackObject", None)
    tb = get_tb() if callable(get_tb) else value.__traceback__
    return type(value), value, tb
