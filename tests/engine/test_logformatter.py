"""LOG_FORMATTER: a project's LogFormatter shapes (or silences) the crawled, scraped,
dropped and error lines; without one, skitter's own lines are unchanged."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

import pytest

from skitter import Crawler, Request, Spider
from skitter.exceptions import ConfigError, ConnectError, DropItem
from skitter.logformatter import LogFormatter
from skitter.testing import MockTransport


class Pages(Spider):
    """Three pages: 0 is dropped by the pipeline, 1 raises in its callback, 2 is scraped;
    and one download that fails."""

    name = "pages"
    start_urls: ClassVar[list[str]] = ["https://a.test/0", "https://a.test/1", "https://a.test/2"]
    start_urls += ["https://a.test/down"]

    def parse(self, response: Any) -> Any:
        n = response.url.rsplit("/", 1)[1]
        if n == "1":
            raise ValueError("broken page")
        yield {"n": n}


class DropZero:
    def process_item(self, item: Any, spider: Any) -> Any:
        if item["n"] == "0":
            raise DropItem("zero")
        return item


def site(request: Request) -> bytes:
    if request.url.endswith("/down"):
        raise ConnectError("refused")
    return b"<html></html>"


class Quiet(LogFormatter):
    """The common reason for a formatter: dropped items at DEBUG, no spider errors."""

    def dropped(self, item: Any, exception: BaseException, response: Any, spider: Any) -> Any:
        return {"level": logging.DEBUG, "msg": "quietly dropped %(item)s", "args": {"item": item}}

    def spider_error(self, failure: Any, request: Any, response: Any, spider: Any) -> Any:
        return None


def crawl(**settings: Any) -> Crawler:
    crawler = Crawler(
        Pages,
        {
            "DOWNLOAD_TRANSPORT": MockTransport(site),
            "RETRY_ENABLED": False,
            "ITEM_PIPELINES": {f"{__name__}.DropZero": 100},
            **settings,
        },
    )
    asyncio.run(crawler.run())
    return crawler


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]


def test_a_projects_formatter_shapes_and_silences_lines(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        crawler = crawl(LOG_FORMATTER=f"{__name__}.Quiet")
    assert isinstance(crawler.logformatter, Quiet)  # type: ignore[attr-defined]
    warnings = messages(caplog, logging.WARNING)
    assert not any("Dropped" in m or "dropped" in m for m in warnings)
    assert "quietly dropped {'n': '0'}" in messages(caplog, logging.DEBUG)
    errors = messages(caplog, logging.ERROR)
    assert not any("Spider error" in m for m in errors)  # silenced
    assert "Error downloading <GET https://a.test/down>: " in " ".join(errors)
    # Scrapy's crawled and scraped lines, at DEBUG
    debug = messages(caplog, logging.DEBUG)
    assert "Crawled (200) <GET https://a.test/2> (referer: None)" in debug
    assert any(m.startswith("Scraped from <200 https://a.test/2>") for m in debug)


def test_scrapys_default_lines(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        crawl(LOG_FORMATTER="skitter.logformatter.LogFormatter")
    assert any(m.startswith("Dropped: zero") for m in messages(caplog, logging.WARNING))
    errors = messages(caplog, logging.ERROR)
    assert "Spider error processing <GET https://a.test/1> (referer: None)" in errors


def test_without_a_formatter_skitters_own_lines_stay(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        crawler = crawl()
    assert type(crawler.logformatter) is LogFormatter  # type: ignore[attr-defined]
    assert not any(m.startswith("Crawled (") for m in messages(caplog, logging.DEBUG))
    assert any(m.startswith("Dropped: zero") for m in messages(caplog, logging.WARNING))
    assert any(m.startswith("Spider error processing") for m in messages(caplog, logging.ERROR))


def test_a_class_that_is_not_a_formatter_is_refused() -> None:
    with pytest.raises(ConfigError, match="is not a log formatter"):
        crawl(LOG_FORMATTER="collections.OrderedDict")
