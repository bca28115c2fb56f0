"""``LOG_FORMATTER``: Scrapy's ``LogFormatter`` API, for projects that shape (or silence)
the lines a crawl logs per page and per item.

Each method returns ``{"level": ..., "msg": ..., "args": {...}}`` for one event, or None
to log nothing: ``crawled`` (a response arrived), ``scraped`` (an item passed every
pipeline), ``dropped`` (a pipeline raised DropItem), ``item_error`` (a pipeline raised
anything else), ``spider_error`` (a callback raised) and ``download_error`` (a download
failed). A project subclasses ``LogFormatter`` and names it in ``LOG_FORMATTER``, most
often to log dropped items at DEBUG rather than WARNING.

By default (``LOG_FORMATTER = None``) skitter logs its own lines and none per page or per
item that succeeded, which a crawl of millions of pages cannot afford. With a formatter
set, ``FormattedLog`` takes over those six lines: skitter's own dropped / error lines give
way to the formatter's, and the crawled / scraped lines are logged (at DEBUG by
default, as in Scrapy) — listening to signals, so a crawl without a formatter pays
nothing for this.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from skitter._components import build_component, load_object
from skitter.exceptions import ConfigError
from skitter.settings import EngineSettings
from skitter.signals import item_dropped, item_error, item_scraped, response_received, spider_error

__all__ = [
    "CRAWLEDMSG",
    "DOWNLOADERRORMSG_LONG",
    "DOWNLOADERRORMSG_SHORT",
    "DROPPEDMSG",
    "ITEMERRORMSG",
    "SCRAPEDMSG",
    "SPIDERERRORMSG",
    "FormattedLog",
    "LogFormatter",
    "install_log_formatter",
]

CRAWLEDMSG = (
    "Crawled (%(status)s) %(request)s%(request_flags)s (referer: %(referer)s)%(response_flags)s"
)
SCRAPEDMSG = "Scraped from %(src)s" + os.linesep + "%(item)s"
DROPPEDMSG = "Dropped: %(exception)s" + os.linesep + "%(item)s"
ITEMERRORMSG = "Error processing %(item)s"
SPIDERERRORMSG = "Spider error processing %(request)s (referer: %(referer)s)"
DOWNLOADERRORMSG_SHORT = "Error downloading %(request)s"
DOWNLOADERRORMSG_LONG = "Error downloading %(request)s: %(errmsg)s"

_Entry = dict[str, Any]


def _referer(request: Any) -> str | None:
    headers = getattr(request, "headers", None)
    value = headers.get("Referer") if headers is not None else None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def _flags(obj: Any) -> str:
    flags = getattr(obj, "flags", None)
    return f" {flags!s}" if flags else ""


class LogFormatter:
    """The lines Scrapy logs for each event; subclass it and override what to change."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> LogFormatter:
        return cls()

    def crawled(self, request: Any, response: Any, spider: Any) -> _Entry | None:
        response_flags = _flags(response)
        return {
            "level": logging.DEBUG,
            "msg": CRAWLEDMSG,
            "args": {
                "status": response.status,
                "request": request,
                "request_flags": _flags(request),
                "referer": _referer(request),
                "response_flags": response_flags,
                "flags": response_flags,  # the name older formatters read
            },
        }

    def scraped(self, item: Any, response: Any, spider: Any) -> _Entry | None:
        return {
            "level": logging.DEBUG,
            "msg": SCRAPEDMSG,
            "args": {"src": response, "item": item},
        }

    def dropped(
        self, item: Any, exception: BaseException, response: Any, spider: Any
    ) -> _Entry | None:
        level = getattr(exception, "log_level", None) or logging.WARNING
        if isinstance(level, str):
            level = logging.getLevelName(level.upper())
        return {
            "level": level,
            "msg": DROPPEDMSG,
            "args": {"exception": exception, "item": item},
        }

    def item_error(
        self, item: Any, exception: BaseException, response: Any, spider: Any
    ) -> _Entry | None:
        return {"level": logging.ERROR, "msg": ITEMERRORMSG, "args": {"item": item}}

    def spider_error(self, failure: Any, request: Any, response: Any, spider: Any) -> _Entry | None:
        return {
            "level": logging.ERROR,
            "msg": SPIDERERRORMSG,
            "args": {"request": request, "referer": _referer(request)},
        }

    def download_error(
        self, failure: Any, request: Any, spider: Any, errmsg: str | None = None
    ) -> _Entry | None:
        args: dict[str, Any] = {"request": request}
        if errmsg:
            args["errmsg"] = errmsg
            return {"level": logging.ERROR, "msg": DOWNLOADERRORMSG_LONG, "args": args}
        return {"level": logging.ERROR, "msg": DOWNLOADERRORMSG_SHORT, "args": args}


def _exc_info(failure: Any) -> Any:
    """What ``exc_info=`` takes for a Failure or an exception (None for neither)."""
    value = getattr(failure, "value", failure)
    return value if isinstance(value, BaseException) else None


class FormattedLog:
    """A crawl's formatter at work: logs each event's entry (if any) through the
    logger the event belongs to. The engine and the pipelines ask it for the lines
    they would log themselves; the rest come from the signals it listens to."""

    def __init__(self, formatter: Any) -> None:
        self.formatter = formatter
        self._engine = logging.getLogger("skitter.engine")
        self._items = logging.getLogger("skitter.pipelines")

    def connect(self, signals: Any) -> None:
        signals.connect(self._crawled, response_received)
        signals.connect(self._scraped, item_scraped)
        signals.connect(self._dropped, item_dropped)
        signals.connect(self._item_error, item_error)
        signals.connect(self._spider_error, spider_error)

    def emit(self, logger: logging.Logger, entry: Any, exc_info: Any = None) -> None:
        if not entry:
            return
        if not isinstance(entry, dict) or "msg" not in entry:
            raise TypeError(
                f"{type(self.formatter).__name__} returned {entry!r}; a LogFormatter method "
                "returns {'level': ..., 'msg': ..., 'args': {...}} or None"
            )
        level = entry.get("level", logging.INFO)
        args = entry.get("args") or {}
        if args:
            logger.log(level, entry["msg"], args, exc_info=exc_info)
        else:
            logger.log(level, entry["msg"], exc_info=exc_info)

    def _crawled(self, request: Any, response: Any, spider: Any, **_: Any) -> None:
        self.emit(self._engine, self.formatter.crawled(request, response, spider))

    def _scraped(self, item: Any, response: Any, spider: Any, **_: Any) -> None:
        self.emit(self._items, self.formatter.scraped(item, response, spider))

    def _dropped(
        self, item: Any, response: Any, exception: BaseException, spider: Any, **_: Any
    ) -> None:
        self.emit(self._items, self.formatter.dropped(item, exception, response, spider))

    def _item_error(self, item: Any, response: Any, spider: Any, failure: Any, **_: Any) -> None:
        entry = self.formatter.item_error(item, _exc_info(failure), response, spider)
        self.emit(self._items, entry, _exc_info(failure))

    def _spider_error(self, failure: Any, response: Any, spider: Any, **_: Any) -> None:
        request = getattr(response, "request", None)
        entry = self.formatter.spider_error(failure, request, response, spider)
        self.emit(self._engine, entry, _exc_info(failure))

    def download_error(
        self, error: BaseException | None, request: Any, spider: Any, reason: str
    ) -> None:
        entry = self.formatter.download_error(error, request, spider, reason)
        self.emit(self._engine, entry, error)


def install_log_formatter(crawler: Any) -> FormattedLog | None:
    """Build LOG_FORMATTER's class for ``crawler`` and connect it (``crawler.logformatter``
    is the formatter, as in Scrapy: Scrapy's default one when the setting is None, then
    not connected). Returns what logs through it, None without one."""
    path = crawler.settings.view(EngineSettings).log_formatter
    if path is None:
        crawler.logformatter = LogFormatter()
        return None
    formatter = build_component(load_object(path), crawler)
    if not callable(getattr(formatter, "crawled", None)):
        raise ConfigError(
            f"LOG_FORMATTER {path!r} is not a log formatter (a class with Scrapy's "
            "LogFormatter methods: subclass skitter.logformatter.LogFormatter)"
        )
    crawler.logformatter = formatter
    formatted = FormattedLog(formatter)
    formatted.connect(crawler.signals)
    return formatted
