"""Scrapy's ``scrapy.downloadermiddlewares.retry``: ``get_retry_request`` for a spider
that decides itself that a response needs another try (a page that came back with a
captcha, an empty JSON list), and the retry middleware.

Retries skitter makes on its own (RETRY_HTTP_CODES, network errors) are the scheduler's:
counted per task, delayed by RETRY_DELAYS, kept across restarts. A request from
``get_retry_request`` is a new request instead, counted in ``meta["retry_times"]``, as
in Scrapy. Both honour ``meta["max_retry_times"]``; ``meta["dont_retry"]`` switches off
the middleware's retries only (the spider that calls ``get_retry_request`` has decided).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skitter.downloader import RetryMiddleware
from skitter.downloader.wiring import give_up_level as _give_up_level
from skitter.exceptions import ConfigError as _ConfigError
from skitter.settings import EngineSettings as _EngineSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from skitter.http import Request

__all__ = ["RetryMiddleware", "get_retry_request", "retry_logger"]

retry_logger = logging.getLogger("skitter.downloadermiddlewares.retry")


def get_retry_request(
    request: Request,
    *,
    spider: Any,
    reason: str | Exception | Callable[[], str | Exception] = "unspecified",
    max_retry_times: int | None = None,
    priority_adjust: int | None = None,
    logger: logging.Logger | logging.LoggerAdapter[logging.Logger] = retry_logger,
    give_up_log_level: int | str | None = None,
    stats_base_key: str = "retry",
) -> Request | None:
    """A copy of ``request`` to try again (``dont_filter``, ``meta["retry_times"]`` one
    more), or None once it has been retried ``max_retry_times`` times (the argument,
    else ``meta["max_retry_times"]``, else RETRY_TIMES). Counted as
    ``<stats_base_key>/count``, ``.../reason_count/<reason>`` and ``.../max_reached``;
    giving up is logged at ``give_up_log_level`` (a level or its name), else
    RETRY_GIVE_UP_LOG_LEVEL. The log lines are Scrapy's, ``reason`` as given; the stats key names
    an exception (or what a callable returns) by its class's dotted path.
    ``priority_adjust`` defaults to RETRY_PRIORITY_ADJUST, which skitter keeps at 0."""
    settings = spider.crawler.settings
    stats = spider.crawler.stats
    retry_times = request.meta.get("retry_times", 0) + 1
    if max_retry_times is None:
        max_retry_times = request.meta.get("max_retry_times")
        if max_retry_times is None:
            max_retry_times = settings.getint("RETRY_TIMES")
    shown = reason
    if callable(reason):  # an exception class too: Scrapy counts it as an instance
        reason = reason()
    if isinstance(reason, Exception):
        cls = type(reason)
        reason = f"{cls.__module__}.{cls.__qualname__}"
    if retry_times > max_retry_times:
        if give_up_log_level is None:
            level = _give_up_level(settings.view(_EngineSettings).retry_give_up_log_level)
        else:
            level = _argument_level(give_up_log_level)
        stats.inc(f"{stats_base_key}/max_reached")
        logger.log(
            level,
            "Gave up retrying %s (failed %d times): %s",
            request,
            retry_times,
            shown,
            extra={"spider": spider},
        )
        return None
    logger.debug(
        "Retrying %s (failed %d times): %s",
        request,
        retry_times,
        shown,
        extra={"spider": spider},
    )
    if priority_adjust is None:
        priority_adjust = settings.getint("RETRY_PRIORITY_ADJUST", 0)
    stats.inc(f"{stats_base_key}/count")
    stats.inc(f"{stats_base_key}/reason_count/{reason}")
    # A fresh taskid: a copy keeps the one the scheduler gave the dont_filter request it
    # copies, and would be merged into that task, which is running.
    return request.replace(
        meta={**request.meta, "retry_times": retry_times},
        dont_filter=True,
        priority=request.priority + priority_adjust,
        taskid=None,
    )


def _argument_level(value: int | str) -> int:
    """The ``give_up_log_level`` argument as a level; a bad one is the caller's mistake,
    a ValueError (as in Scrapy), not a settings error."""
    try:
        return _give_up_level(value)
    except _ConfigError as exc:
        raise ValueError(f"invalid give_up_log_level: {exc}") from None
