"""RetryPolicy: pyspider's table, sequences, Retry-After, and when to give up."""

from __future__ import annotations

import math

import pytest

from skitter.scheduler._retry import (
    CRAWL_RETRY_DELAYS,
    RETRY_HTTP_CODES,
    SERVICE_RETRY_DELAYS,
    RetryPolicy,
)
from skitter.settings import SETTINGS

NOW = 1_700_000_000.0


def test_service_table_is_pyspiders() -> None:
    policy = RetryPolicy(SERVICE_RETRY_DELAYS, retries=10)
    assert [policy.delay(i) for i in range(7)] == [30, 3600, 21600, 43200, 86400, 86400, 86400]
    assert policy.next_attempt(0, NOW) == NOW + 30
    assert policy.next_attempt(5, NOW) == NOW + 86400


def test_sequence_repeats_its_last_delay() -> None:
    policy = RetryPolicy([1, 5], retries=5)
    assert [policy.next_attempt(i, NOW) for i in range(4)] == [NOW + 1, NOW + 5, NOW + 5, NOW + 5]


def test_defaults_match_the_settings() -> None:
    policy = RetryPolicy()
    assert policy.retries == SETTINGS["RETRY_TIMES"].default
    assert list(CRAWL_RETRY_DELAYS) == SETTINGS["RETRY_DELAYS"].default
    assert sorted(RETRY_HTTP_CODES) == SETTINGS["RETRY_HTTP_CODES"].default


def test_gives_up_after_retries() -> None:
    policy = RetryPolicy([1], retries=2)
    assert policy.next_attempt(1, NOW) == NOW + 1
    assert policy.next_attempt(2, NOW) is None
    assert policy.next_attempt(2, NOW, retries=3) == NOW + 1, "a request's own retries win"
    assert policy.next_attempt(0, NOW, retries=0) is None
    assert RetryPolicy([1], retries=0).next_attempt(0, NOW) is None


def test_retry_after_wins_when_longer() -> None:
    policy = RetryPolicy([10], retries=3)
    assert policy.next_attempt(0, NOW, retry_after=120) == NOW + 120
    assert policy.next_attempt(0, NOW, retry_after=2) == NOW + 10
    assert policy.next_attempt(0, NOW, retry_after=math.inf) == NOW + 10
    assert policy.next_attempt(3, NOW, retry_after=5) is None


def test_mapping_without_later_entry_repeats_the_last() -> None:
    policy = RetryPolicy({0: 1, 1: 7}, retries=9)
    assert [policy.delay(i) for i in range(4)] == [1, 7, 7, 7]


def test_mapping_from_json_settings() -> None:
    policy = RetryPolicy({"0": 2, "1": 4, "": 60}, retries=9)
    assert [policy.delay(i) for i in range(3)] == [2, 4, 60]


def test_mapping_gap_takes_the_later_delay() -> None:
    policy = RetryPolicy({0: 1, 2: 9, "": 50}, retries=9)
    assert [policy.delay(i) for i in range(4)] == [1, 50, 9, 50]


@pytest.mark.parametrize(
    ("delays", "error"),
    [
        ([], ValueError),
        ({}, ValueError),
        ([1, -2], ValueError),
        ([math.nan], ValueError),
        ({"x": 1}, ValueError),
        ({-1: 1}, ValueError),
        ({True: 1}, ValueError),
        (["5"], TypeError),
        ("30", TypeError),
        (30, TypeError),
    ],
)
def test_rejects_bad_tables(delays: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="retry delay"):
        RetryPolicy(delays, retries=3)  # type: ignore[arg-type]


def test_rejects_bad_retries() -> None:
    with pytest.raises(ValueError, match="retries"):
        RetryPolicy([1], retries=-1)


def test_retryable_statuses() -> None:
    policy = RetryPolicy()
    retryable = [status for status in range(100, 600) if policy.is_retryable_status(status)]
    assert retryable == [408, 429, 500, 502, 503, 504, 522, 524]
    custom = RetryPolicy(retry_http_codes=[418])
    assert custom.is_retryable_status(418)
    assert not custom.is_retryable_status(503)
