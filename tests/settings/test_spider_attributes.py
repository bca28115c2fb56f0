"""Scrapy's spider attributes that stand for settings (``download_delay``,
``download_timeout``, ``download_maxsize``, ``download_warnsize``,
``max_concurrent_requests``) are honoured, as Scrapy's components honour them: a
ported spider that says ``download_maxsize = 1000`` is not crawled without a limit."""

from __future__ import annotations

from typing import Any

import pytest

from skitter import Crawler, Response, Spider
from skitter.exceptions import ConfigError
from skitter.settings._attributes import SPIDER_ATTRIBUTES
from skitter.testing import MockTransport


class Attributed(Spider):
    name = "attributed"
    custom_settings = {"DOWNLOAD_DELAY": 5.0, "LOG_LEVEL": "WARNING"}
    download_delay = 0.25
    download_timeout = 7.5
    download_maxsize = 1000
    download_warnsize = 500
    max_concurrent_requests = 3


def test_each_attribute_is_its_setting_over_custom_settings() -> None:
    settings = Crawler(Attributed).settings
    assert settings["DOWNLOAD_DELAY"] == 0.25  # the attribute wins, as in Scrapy
    assert settings["DOWNLOAD_TIMEOUT"] == 7.5
    assert settings["DOWNLOAD_MAXSIZE"] == 1000
    assert settings["DOWNLOAD_WARNSIZE"] == 500
    assert settings["CONCURRENT_REQUESTS_PER_DOMAIN"] == 3
    assert settings["LOG_LEVEL"] == "WARNING"  # custom_settings keep the rest


def test_the_command_line_still_has_the_last_word() -> None:
    settings = Crawler(Attributed, cli_settings={"DOWNLOAD_DELAY": "1"}).settings
    assert settings["DOWNLOAD_DELAY"] == 1.0


def test_a_spider_without_them_keeps_its_custom_settings_object() -> None:
    class Plain(Spider):
        name = "plain"
        custom_settings = {"DOWNLOAD_DELAY": 2.0}

    assert Crawler(Plain).settings["DOWNLOAD_DELAY"] == 2.0
    assert all(not hasattr(Spider, attribute) for attribute in SPIDER_ATTRIBUTES)


async def test_download_maxsize_on_the_spider_refuses_a_larger_page() -> None:
    seen: list[int] = []

    class Small(Spider):
        name = "small"
        start_urls = ["http://example.com/small", "http://example.com/big"]
        download_maxsize = 100

        def parse(self, response: Response) -> Any:
            seen.append(len(response.body))

    site = MockTransport(lambda request: "x" * (50 if request.url.endswith("small") else 500))
    stats = await Crawler(Small, {"DOWNLOAD_TRANSPORT": site}).run()
    assert seen == [50]
    assert stats["downloader/exception_type_count/ResponseTooLarge"] == 1


@pytest.mark.parametrize("attribute", sorted(SPIDER_ATTRIBUTES))
def test_a_bad_value_is_refused_by_the_settings_name(attribute: str) -> None:
    spider = type("Bad", (Spider,), {"name": "bad", attribute: "soon"})
    with pytest.raises(ConfigError, match=SPIDER_ATTRIBUTES[attribute]):
        Crawler(spider)
