"""What became of one task: decided by one pure function, carried out by the engine.

A task ends in a download result (a response, or a request to schedule instead) or in
an exception, raised by the download, a middleware, the spider's callback or the store.
``classify`` reads which, with no I/O, and says what the engine must do: what the spider
hears (callback, errback, nothing), how the task is settled (ack, retry, FAILED, BAD,
or not at all), what is counted and logged, and what the monitor shows. The engine
applies the ``Verdict`` in one place (``Engine._apply``), so the rules below can be read,
and tested, without a crawl. (``Verdict``, not ``Outcome``: ``skitter.engine.Outcome`` is
the monitor's record of a finished task, which a verdict fills in.)

======================  ========================  ==================  ================
what ended the task     the spider hears          the task            monitor
======================  ========================  ==================  ================
a Response              its callback              ack                 ok, its status
a Request (redirect)    nothing (it is queued)    ack                 ok
RetryLater              nothing                   retry (nack)        its status
RetryLater, last try    last response, or errback retry (FAILED)      its status
IgnoreRequest           errback                   BAD                 "ignored: ..."
InvalidURL              errback                   BAD
other RequestError      errback                   FAILED
CloseSpider             nothing (project closes)  ack                 ok
FrontierUnavailable     nothing                   left to its lease   (raised on)
FatalError              nothing                   left unsettled      (raised on)
any other Exception     nothing (a bug, logged)   FAILED
======================  ========================  ==================  ================
"""

from __future__ import annotations

import enum
import logging
from typing import NamedTuple

from skitter.downloader.wiring import failed_times
from skitter.exceptions import (
    CloseSpider,
    FatalError,
    FrontierUnavailable,
    IgnoreRequest,
    InvalidURL,
    RequestError,
    RetryLater,
)
from skitter.http import Request, Response

__all__ = ["Kind", "LogLine", "Verdict", "classify", "failure_reason", "retry_reason"]

_RECEIVED = ("response_received_count",)


class Kind(enum.Enum):
    """How a task ended; each kind is applied one way (see the module's table)."""

    RESPONSE = "response"
    REDIRECT = "redirect"
    RETRY = "retry"
    GIVE_UP = "give_up"
    IGNORED = "ignored"
    BAD_URL = "bad_url"
    FAILED = "failed"
    CLOSE_SPIDER = "close_spider"
    BUG = "bug"
    #: Not settled: the exception goes on (store out of reach, or a FatalError).
    UNSETTLED = "unsettled"


class LogLine(NamedTuple):
    """A message about the task: ``message`` takes the request, then ``args``."""

    level: int
    message: str
    args: tuple[object, ...] = ()
    #: Log the exception's traceback with it (a bug, not an expected failure).
    traceback: bool = False


class Verdict(NamedTuple):
    """What to do with a finished task, and what to show of it."""

    kind: Kind
    #: Why, for the monitor and the task's record (FAILED, BAD and retry reasons).
    reason: str = ""
    #: The HTTP status seen, if any, for the monitor.
    status: int | None = None
    #: RetryLater's lower bound on the next attempt (Retry-After, say).
    retry_delay: float | None = None
    #: Stats keys to increment by one.
    counts: tuple[str, ...] = ()
    log: LogLine | None = None
    #: The response the spider's callback gets (a response, or the last one given up on).
    response: Response | None = None
    #: The request to schedule instead (a redirect).
    redirect: Request | None = None
    #: What the errback hears (or, for a bug, whose traceback is logged).
    error: BaseException | None = None
    #: Why the spider asked to close (CloseSpider).
    close_reason: str = ""
    #: What a retry is counted as in the stats (``retry/reason_count/<this>``): few
    #: values, where ``reason`` names the cause in full.
    counted_as: str = ""

    @property
    def ok(self) -> bool:
        """Whether the task succeeded (the monitor's "ok"), once it is settled."""
        return self.kind in _OK


_OK = frozenset({Kind.RESPONSE, Kind.REDIRECT, Kind.CLOSE_SPIDER})


def classify(
    result: Response | Request | Exception,
    *,
    retried: int = 0,
    out_of_retries: bool = False,
    status: int | None = None,
) -> Verdict:
    """The outcome of a task that ended in ``result``: a download result, or the
    exception raised while downloading or handling it.

    ``retried`` counts the task's earlier failed attempts; ``out_of_retries`` says
    whether the retry table gives up on it now (``RetryPolicy.gives_up``); ``status``
    is that of a response already received when the exception came (its callback
    failed, say)."""
    if isinstance(result, Response):  # once per page: positional is twice as fast
        return Verdict(Kind.RESPONSE, "", result.status, None, _RECEIVED, None, result)
    if isinstance(result, Request):  # redirected: the new request replaces this one
        return Verdict(Kind.REDIRECT, reason=f"redirected to {result.url}", redirect=result)
    exc = result
    if isinstance(exc, RetryLater):
        return _retry(exc, retried, out_of_retries)
    if isinstance(exc, IgnoreRequest):
        return Verdict(
            Kind.IGNORED,
            reason=f"ignored: {exc.reason}",
            status=status,
            counts=("engine/ignored_requests",),
            log=LogLine(logging.DEBUG, "Ignored %s: %s", (exc.reason,)),
            error=exc,
        )
    if isinstance(exc, InvalidURL):
        return Verdict(
            Kind.BAD_URL,
            reason=str(exc),
            status=status,
            log=LogLine(logging.WARNING, "Bad URL %s: %s", (exc,)),
            error=exc,
        )
    if isinstance(exc, RequestError):
        return Verdict(
            Kind.FAILED,
            reason=failure_reason(exc),
            status=status,
            log=LogLine(logging.ERROR, "Error downloading %s: %s", (failure_reason(exc),)),
            error=exc,
        )
    if isinstance(exc, CloseSpider):
        return Verdict(Kind.CLOSE_SPIDER, status=status, close_reason=exc.reason)
    if isinstance(exc, FrontierUnavailable):
        return Verdict(Kind.UNSETTLED, reason="task store unavailable", status=status, error=exc)
    if isinstance(exc, FatalError):
        return Verdict(
            Kind.UNSETTLED, reason=f"{type(exc).__name__}: {exc}", status=status, error=exc
        )
    # A bug in a middleware (or the like): contained to this request.
    name = type(exc).__name__
    return Verdict(
        Kind.BUG,
        reason=f"{name}: {exc}",
        status=status,
        counts=(f"engine/unexpected_errors/{name}",),
        log=LogLine(logging.ERROR, "Unexpected error processing %s", traceback=True),
        error=exc,
    )


def _retry(exc: RetryLater, retried: int, out_of_retries: bool) -> Verdict:
    """Retry by the table; or, out of retries, give the spider the last response (the
    HTTP error filter decides whether its callback or errback sees it) or the error,
    and then mark the task FAILED. The reason names the cause (``"ConnectError:
    cannot connect: Connection refused"``); the stats count by ``exc.reason`` alone."""
    response = exc.response
    status = response.status if response is not None else None
    reason = retry_reason(exc)
    if not out_of_retries:
        return Verdict(
            Kind.RETRY,
            reason=reason,
            status=status,
            retry_delay=exc.delay,
            log=LogLine(logging.DEBUG, "Retrying %s (%s): %s", (failed_times(retried + 1), reason)),
            counted_as=exc.reason,
        )
    return Verdict(
        Kind.GIVE_UP,
        reason=reason,
        status=status,
        retry_delay=exc.delay,
        counts=_RECEIVED if response is not None else (),
        log=LogLine(
            logging.ERROR, "Gave up retrying %s (%s): %s", (failed_times(retried + 1), reason)
        ),
        response=response,
        error=exc.cause or exc,
        counted_as=exc.reason,
    )


def retry_reason(exc: RetryLater) -> str:
    """``exc.reason`` ("ConnectError", "HTTP 503"), with what its cause says when that
    is more."""
    cause = exc.cause
    if cause is None:
        return exc.reason
    full = failure_reason(cause)
    return full if full.startswith(exc.reason) else f"{exc.reason} ({full})"


def failure_reason(exc: BaseException) -> str:
    """Why a task failed, as its record, the dashboard and the log lines show it: the
    error's class and what it says (the request left out, as its URL is shown beside:
    ``"ConnectError: cannot connect: Connection refused"``)."""
    text = exc.detail if isinstance(exc, RequestError) else str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
