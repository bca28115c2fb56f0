"""parse_retry_after: both forms of the header, and what is not one."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from skitter.downloader import parse_retry_after

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [("120", 120.0), (" 5 ", 5.0), ("0", 0.0), ("1.5", 1.5), ("-3", 0.0)],
)
def test_seconds(value: str, expected: float) -> None:
    assert parse_retry_after(value, NOW) == expected


def test_http_date_in_the_future() -> None:
    assert parse_retry_after(formatdate(NOW + 90, usegmt=True), NOW) == pytest.approx(90.0)


def test_http_date_in_the_past_means_now() -> None:
    assert parse_retry_after(formatdate(NOW - 90, usegmt=True), NOW) == 0.0


def test_obsolete_date_formats_are_read() -> None:
    # RFC 850 and asctime forms are still allowed by RFC 9110.
    assert parse_retry_after("Tuesday, 14-Nov-23 22:14:20 GMT", NOW) == pytest.approx(60.0)
    assert parse_retry_after("Wed Nov 15 22:13:20 2023", NOW) == pytest.approx(86400.0)


@pytest.mark.parametrize("value", [None, "", "soon", "nan", "inf", "1e999", "12abc", "Mon, 99"])
def test_unreadable_values_are_none(value: str | None) -> None:
    assert parse_retry_after(value, NOW) is None
