"""Scrapy's ``scrapy.utils.log``, the part with a meaning in skitter: a Failure as a log
record's ``exc_info``. (skitter configures logging itself: ``skitter._logsetup``.)"""

from __future__ import annotations

from types import TracebackType
from typing import Any

__all__ = ["failure_to_exc_info"]


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
