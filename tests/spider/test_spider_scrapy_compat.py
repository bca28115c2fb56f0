"""Scrapy's small Spider API points: its own list of start URLs, the deprecated
``log()``, and the message of a missing ``parse``."""

from __future__ import annotations

import logging

import pytest

from skitter import Spider
from skitter.exceptions import ScrapyDeprecationWarning
from skitter.http import TextResponse


def test_each_spider_gets_a_start_urls_list_of_its_own() -> None:
    one, two = Spider("one"), Spider("two")
    one.start_urls.append("https://example.com/")  # type: ignore[attr-defined]
    assert two.start_urls == []


def test_log_is_deprecated_and_goes_to_the_spiders_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spider = Spider("logs")
    with (
        caplog.at_level(logging.INFO, logger="logs"),
        pytest.warns(ScrapyDeprecationWarning, match=r"Spider.log\(\) is deprecated"),
    ):
        spider.log("hello", logging.INFO)
    assert caplog.record_tuples == [("logs", logging.INFO, "hello")]


def test_a_missing_parse_says_so_as_scrapy_does() -> None:
    response = TextResponse("https://example.com/", body=b"x")
    with pytest.raises(NotImplementedError, match=r"Spider\.parse callback is not defined"):
        Spider("no_parse").parse(response)
