"""Scrapy's ``scrapy.utils.engine``: the engine's state as a report (the ``est`` of
Scrapy's telnet console, and of debugging extensions that log it).

skitter's engine is not Scrapy's, so the report's lines are skitter's: how many tasks run
now and, per spider, how many are in flight, whether it has closed and why. Each line is
``(what, value)``, as Scrapy's are (``what`` names the attribute read).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["format_engine_status", "get_engine_status", "print_engine_status"]

log = logging.getLogger(__name__)


def get_engine_status(engine: Any) -> list[tuple[str, Any]]:
    """``(what, value)`` pairs describing ``engine`` now; a value that cannot be read is
    the exception's text, so that a report never fails."""
    status: list[tuple[str, Any]] = [("engine.in_flight", _read(lambda: engine.in_flight))]
    for project in getattr(engine, "projects", ()):
        name = getattr(project, "name", "?")
        for field in ("in_flight", "start_exhausted", "closing", "closed"):
            status.append((f"{name}.{field}", _read(lambda p=project, f=field: getattr(p, f))))
    return status


def _read(read: Any) -> Any:
    try:
        return read()
    except Exception as exc:
        return f"{type(exc).__name__} (exception)"


def format_engine_status(engine: Any) -> str:
    """The report as text: a title line, then one ``what : value`` line each."""
    lines = [f"{what:<40} : {value}" for what, value in get_engine_status(engine)]
    return "Execution engine status\n\n" + "\n".join(lines) + "\n"


def print_engine_status(engine: Any) -> None:
    """Print ``format_engine_status(engine)``."""
    print(format_engine_status(engine))
