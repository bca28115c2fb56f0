"""``classify``: how a task ended decides what the engine does, with no I/O.

One test per case of the engine's former ``except`` ladder; the crawl tests check that
the engine applies each verdict as before."""

from __future__ import annotations

import logging

import pytest

from skitter.engine._outcome import Kind, Verdict, classify
from skitter.exceptions import (
    CloseSpider,
    ConnectError,
    DownloadTimeout,
    FatalError,
    FrontierOutage,
    FrontierUnavailable,
    HttpError,
    IgnoreRequest,
    InvalidURL,
    JobStateLost,
    RequestError,
    RetryLater,
    StorageError,
)
from skitter.http import Request, Response

URL = "http://a.example/page"


def response(status: int = 200) -> Response:
    return Response(URL, status=status, request=Request(URL))


def test_a_response_goes_to_its_callback_and_is_acked() -> None:
    got = response(203)
    verdict = classify(got)
    assert verdict.kind is Kind.RESPONSE
    assert verdict.response is got
    assert verdict.status == 203
    assert verdict.counts == ("response_received_count",)
    assert verdict.log is None
    assert verdict.ok


def test_a_redirect_queues_the_new_request_and_acks() -> None:
    new = Request("http://a.example/moved")
    verdict = classify(new)
    assert verdict.kind is Kind.REDIRECT
    assert verdict.redirect is new
    assert verdict.reason == "redirected to http://a.example/moved"
    assert verdict.status is None
    assert verdict.counts == ()
    assert verdict.ok


def test_retry_later_is_retried_with_its_delay_and_status() -> None:
    exc = RetryLater("503 Service Unavailable", response=response(503), delay=7.0)
    verdict = classify(exc, retried=2, out_of_retries=False)
    assert verdict.kind is Kind.RETRY
    assert (verdict.reason, verdict.status, verdict.retry_delay) == (
        "503 Service Unavailable",
        503,
        7.0,
    )
    assert verdict.counts == ()
    assert verdict.response is None and verdict.error is None  # the spider hears nothing
    assert verdict.log is not None
    assert verdict.log.level == logging.DEBUG
    assert verdict.log.args == ("failed 3 times", "503 Service Unavailable")
    assert not verdict.ok


def test_retry_later_out_of_retries_gives_the_spider_the_last_response() -> None:
    last = response(503)
    verdict = classify(RetryLater("503", response=last), retried=3, out_of_retries=True)
    assert verdict.kind is Kind.GIVE_UP
    assert verdict.response is last
    assert verdict.status == 503
    assert verdict.counts == ("response_received_count",)
    assert verdict.log is not None and verdict.log.level == logging.ERROR
    assert verdict.log.args == ("failed 4 times", "503")
    assert not verdict.ok


def test_retry_later_out_of_retries_without_a_response_goes_to_the_errback() -> None:
    cause = DownloadTimeout("timed out")
    exc = RetryLater("DownloadTimeout", cause=cause)
    verdict = classify(exc, out_of_retries=True)
    assert verdict.kind is Kind.GIVE_UP
    assert verdict.response is None
    assert verdict.error is cause  # the errback hears the cause, not the signal
    assert verdict.counts == ()
    assert verdict.status is None
    assert classify(RetryLater("x"), out_of_retries=True).error is not None


def test_a_retry_names_its_cause_and_is_counted_by_its_class() -> None:
    request = Request("http://127.0.0.1:1/")
    cause = ConnectError(
        f"{request!r}: cannot connect: Connection refused",
        request=request,
        cause="Connection refused",
    )
    for out_of_retries in (False, True):
        verdict = classify(
            RetryLater("ConnectError", cause=cause), retried=0, out_of_retries=out_of_retries
        )
        assert verdict.reason == "ConnectError: cannot connect: Connection refused"
        assert verdict.counted_as == "ConnectError"
        assert verdict.log is not None
        assert verdict.log.args == ("failed once", verdict.reason)
    other = classify(RetryLater("captcha", cause=ValueError("no form")), out_of_retries=True)
    assert other.reason == "captcha (ValueError: no form)"


def test_ignore_request_is_bad_and_counted() -> None:
    exc = IgnoreRequest("forbidden by robots.txt")
    verdict = classify(exc)
    assert verdict.kind is Kind.IGNORED
    assert verdict.reason == "ignored: forbidden by robots.txt"
    assert verdict.counts == ("engine/ignored_requests",)
    assert verdict.error is exc
    assert verdict.log is not None and verdict.log.level == logging.DEBUG
    assert not verdict.ok


def test_an_invalid_url_is_bad() -> None:
    exc = InvalidURL("no host in 'http://'")
    verdict = classify(exc)
    assert verdict.kind is Kind.BAD_URL
    assert verdict.reason == str(exc)
    assert verdict.error is exc
    assert verdict.log is not None and verdict.log.level == logging.WARNING


@pytest.mark.parametrize(
    "exc",
    [
        ConnectError("refused"),
        DownloadTimeout("slow"),
        HttpError("404", response=response(404)),
        RequestError("odd"),
    ],
)
def test_a_request_error_fails_the_task_after_the_errback(exc: RequestError) -> None:
    verdict = classify(exc)
    assert verdict.kind is Kind.FAILED
    assert verdict.reason == f"{type(exc).__name__}: {exc}"
    assert verdict.error is exc
    assert verdict.log is not None and verdict.log.level == logging.ERROR
    assert not verdict.log.traceback
    assert verdict.counts == ()


def test_close_spider_acks_and_closes_with_its_reason() -> None:
    verdict = classify(CloseSpider("enough"), status=200)
    assert verdict.kind is Kind.CLOSE_SPIDER
    assert verdict.close_reason == "enough"
    assert verdict.reason == ""
    assert verdict.status == 200  # the response seen before the callback closed
    assert verdict.ok


def test_an_unreachable_store_leaves_the_task_to_its_lease() -> None:
    verdict = classify(FrontierUnavailable("connection refused"), status=200)
    assert verdict.kind is Kind.UNSETTLED
    assert verdict.reason == "task store unavailable"
    assert verdict.status == 200
    assert not verdict.ok


@pytest.mark.parametrize(
    "exc",
    [
        FatalError("disk full"),
        StorageError("no space"),
        JobStateLost("gone"),
        FrontierOutage("long"),
    ],
)
def test_a_fatal_error_leaves_the_task_unsettled(exc: FatalError) -> None:
    verdict = classify(exc)
    assert verdict.kind is Kind.UNSETTLED
    assert verdict.reason == f"{type(exc).__name__}: {exc}"
    assert verdict.counts == ()


def test_any_other_exception_is_a_bug_contained_to_its_task() -> None:
    exc = KeyError("oops")
    verdict = classify(exc, status=200)
    assert verdict.kind is Kind.BUG
    assert verdict.reason == "KeyError: 'oops'"
    assert verdict.counts == ("engine/unexpected_errors/KeyError",)
    assert verdict.error is exc
    assert verdict.log is not None and verdict.log.traceback
    assert verdict.status == 200
    assert not verdict.ok


def test_the_status_of_a_response_already_seen_is_kept_except_by_retry_later() -> None:
    assert classify(IgnoreRequest("x"), status=200).status == 200
    assert classify(ValueError("x"), status=200).status == 200
    assert classify(RetryLater("x"), status=200).status is None  # its own response, or none


def test_a_verdict_is_a_frozen_value() -> None:
    verdict = classify(response())
    assert isinstance(verdict, Verdict)
    with pytest.raises(AttributeError):
        verdict.kind = Kind.BUG  # type: ignore[misc]
