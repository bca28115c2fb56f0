"""RetryMiddleware: marks failed attempts as retryable; the scheduler does the rest.

Unlike Scrapy's, this middleware neither counts attempts nor waits: pyspider's
scheduler owns the retry table, so a retry survives a restart and a
distributed crawl agrees on the count. The middleware only translates failures into
``RetryLater``:

- a response whose status is in RETRY_HTTP_CODES → ``RetryLater(reason="HTTP 503",
  response=..., delay=<Retry-After in seconds, or None>)``; the response is kept so it
  can still reach the spider when the retries run out;
- an error of a class RETRY_EXCEPTIONS names (by default every ``TransportError``:
  ConnectError, DownloadTimeout, ConnectionLost) →
  ``RetryLater(reason=<error class name>, cause=<the error>)``.

``meta["dont_retry"]`` turns it off for one request. Other errors (InvalidURL,
ResponseTooLarge, RedirectError) are not retryable: a second attempt would fail the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter._types import CrawlContext
from skitter.downloader.middlewares._retry_after import parse_retry_after
from skitter.downloader.middlewares._retry_exceptions import retry_exceptions
from skitter.exceptions import ConfigError, NotConfigured, RetryLater
from skitter.http import Request, Response
from skitter.settings import DownloaderSettings, Settings

__all__ = ["RetryMiddleware", "failed_times", "give_up_level"]


class RetryMiddleware:
    """Raises ``RetryLater`` for retryable statuses and network errors.

    Plug-ins subclass it as Scrapy's: ``RetryMiddleware.__init__(self, settings)`` builds
    it from the settings alone (with the system clock), as scrapy-fake-useragent's
    ``RetryUserAgentMiddleware`` does."""

    def __init__(
        self,
        retry_http_codes: Iterable[int] | Settings,
        clock: Clock | None = None,
        exceptions: tuple[type[BaseException], ...] | None = None,
    ) -> None:
        if isinstance(retry_http_codes, Settings):  # Scrapy's RetryMiddleware(settings)
            own = retry_http_codes.view(DownloaderSettings)
            retry_http_codes = own.retry_http_codes
            exceptions = retry_exceptions(own.retry_exceptions)
        self.retry_http_codes = frozenset(int(code) for code in retry_http_codes)
        self._clock = clock or SystemClock()
        #: What RETRY_EXCEPTIONS names (``retry_exceptions``).
        self.exceptions = exceptions if exceptions is not None else retry_exceptions(None)

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> RetryMiddleware:
        settings = crawler.settings.view(DownloaderSettings)
        if not settings.retry_enabled:
            raise NotConfigured
        exceptions = retry_exceptions(settings.retry_exceptions)
        return cls(settings.retry_http_codes, crawler.clock, exceptions)

    @property
    def EXCEPTIONS_TO_RETRY(self) -> tuple[type[BaseException], ...]:
        """Scrapy's name (subclasses read it) for what RETRY_EXCEPTIONS names."""
        return self.exceptions

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        if response.status not in self.retry_http_codes or request.meta.get("dont_retry"):
            return response
        delay = parse_retry_after(response.header("Retry-After"), self._clock.time())
        raise RetryLater(f"HTTP {response.status}", request=request, response=response, delay=delay)

    def process_exception(self, request: Request, exception: Exception, spider: Any = None) -> None:
        if isinstance(exception, self.exceptions) and not request.meta.get("dont_retry"):
            raise RetryLater(
                type(exception).__name__, request=request, cause=exception
            ) from exception
        return None


def failed_times(attempts: int) -> str:
    """How many attempts failed, in words for a log line: ``"failed once"``,
    ``"failed 4 times"``."""
    return "failed once" if attempts == 1 else f"failed {attempts} times"


def give_up_level(value: object) -> int:
    """RETRY_GIVE_UP_LOG_LEVEL as a logging level: a name (``"WARNING"``, any case) or
    a number, as Scrapy takes it. Anything else is refused rather than logged at a
    level nobody asked for."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return int(text)
        level = logging.getLevelNamesMapping().get(text.upper())
        if level is not None:
            return level
    names = ", ".join(logging.getLevelNamesMapping())
    raise ConfigError(f"RETRY_GIVE_UP_LOG_LEVEL {value!r}: use a level number or one of {names}")
