"""Scrapy's settings API on skitter's Settings: priorities, set() until the crawl starts,
then frozen; views and checks follow the values."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skitter import Spider, signals
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError
from skitter.settings import (
    SETTINGS_PRIORITIES,
    BaseSettings,
    DownloaderSettings,
    Settings,
    get_settings_priority,
)


class Plain(Spider):
    name = "plain"

    async def start(self):  # type: ignore[override]
        return
        yield


def test_a_value_is_replaced_only_from_an_equal_or_higher_priority() -> None:
    settings = Settings({"CONCURRENT_REQUESTS": 3}, priority="spider")
    assert settings.getpriority("CONCURRENT_REQUESTS") == SETTINGS_PRIORITIES["spider"]
    settings.set("CONCURRENT_REQUESTS", 5, "project")
    assert settings["CONCURRENT_REQUESTS"] == 3
    settings.set("CONCURRENT_REQUESTS", "7", "cmdline")  # typed as the registry says
    assert settings["CONCURRENT_REQUESTS"] == 7
    assert settings.source("CONCURRENT_REQUESTS") == "cli"
    assert settings.getpriority("DOWNLOAD_DELAY") == 0  # known, unset: the default's
    assert settings.getpriority("NOT_A_SETTING") is None
    assert get_settings_priority("addon") == 15 and get_settings_priority(25) == 25


def test_a_value_set_is_checked_like_any_layer() -> None:
    settings = Settings()
    with pytest.raises(ConfigError, match="must be int"):
        settings.set("CONCURRENT_REQUESTS", [1])
    with pytest.raises(ConfigError, match="upper case"):
        settings.set("concurrent_requests", 1)


def test_frozen_settings_refuse_changes_and_copies_are_not_frozen() -> None:
    settings = Settings({"DOWNLOAD_DELAY": 1.0})
    settings.freeze()
    with pytest.raises(TypeError, match="immutable Settings"):
        settings.set("DOWNLOAD_DELAY", 2.0)
    with pytest.raises(TypeError, match="immutable Settings"):
        del settings["DOWNLOAD_DELAY"]
    copy = settings.copy()
    copy.set("DOWNLOAD_DELAY", 2.0)
    assert copy["DOWNLOAD_DELAY"] == 2.0 and settings["DOWNLOAD_DELAY"] == 1.0
    assert settings.frozencopy().frozen


def test_a_view_follows_a_change_made_before_the_freeze() -> None:
    settings = Settings({"DOWNLOAD_TIMEOUT": 10})
    assert settings.view(DownloaderSettings).download_timeout == 10
    settings.set("DOWNLOAD_TIMEOUT", 20)
    assert settings.view(DownloaderSettings).download_timeout == 20
    settings.freeze()
    assert settings.view(DownloaderSettings) is settings.view(DownloaderSettings)


def test_a_settings_object_with_priorities_keeps_them_through_the_crawler() -> None:
    project = Settings()
    project.setdict({"CONCURRENT_REQUESTS": 4}, priority="cmdline")

    class Custom(Plain):
        custom_settings = {"CONCURRENT_REQUESTS": 2}  # spider < cmdline

    crawler = Crawler(Custom, project)
    assert crawler.settings["CONCURRENT_REQUESTS"] == 4
    assert not project.frozen


def test_crawler_settings_can_be_set_until_the_crawl_starts_then_are_frozen() -> None:
    crawler = Crawler(Plain)
    crawler.settings.set("CONCURRENT_REQUESTS", 3)
    asyncio.run(crawler.run())
    assert crawler.settings["CONCURRENT_REQUESTS"] == 3
    assert crawler.settings.frozen
    with pytest.raises(TypeError):
        crawler.settings.set("CONCURRENT_REQUESTS", 4)


def test_a_typo_set_after_the_crawler_was_made_is_refused_at_start() -> None:
    crawler = Crawler(Plain)
    crawler.settings.set("DEPTH_MAX", 2)
    with pytest.raises(ConfigError, match="unknown setting 'DEPTH_MAX'"):
        asyncio.run(crawler.run())


def test_base_settings_are_scrapys_for_any_names() -> None:
    settings = BaseSettings({"key": 1}, priority=0)
    assert settings["missing"] is None
    settings["key"] = 2
    assert settings.getpriority("key") == 20
    settings.add_to_list("LIST", "a")
    assert settings.getlist("LIST") == ["a"]
    assert settings.maxpriority() == 20


def test_scrapys_file_handler_path_is_skitters_local_handler(tmp_path: Path) -> None:
    from skitter.core.downloader.handlers.file import FileDownloadHandler
    from skitter.http import Request
    from skitter.utils.test import get_crawler

    page = tmp_path / "page.html"
    page.write_bytes(b"<p>hi</p>")
    handler = FileDownloadHandler.from_crawler(get_crawler())
    response = asyncio.run(handler.download_request(Request(page.as_uri())))
    assert response.body == b"<p>hi</p>" and response.status == 200


def test_spider_update_settings_lays_custom_settings_at_the_spiders_priority() -> None:
    class Custom(Plain):
        custom_settings = {"CONCURRENT_REQUESTS": 2, "DOWNLOAD_DELAY": 1.0}

    settings = Settings({"CONCURRENT_REQUESTS": 8}, priority="project")
    settings.set("DOWNLOAD_DELAY", 3.0, "cmdline")
    Custom.update_settings(settings)
    assert settings["CONCURRENT_REQUESTS"] == 2 and settings["DOWNLOAD_DELAY"] == 3.0


async def test_scrapys_crawl_async_runs_the_crawl_with_the_spiders_arguments() -> None:
    class Argued(Plain):
        async def start(self):  # type: ignore[override]
            yield {"tag": getattr(self, "tag", None)}

    items: list[Any] = []
    crawler = Crawler(Argued)
    crawler.signals.connect(lambda item, **_: items.append(item), signals.item_scraped)
    await crawler.crawl_async(tag="x")
    assert items == [{"tag": "x"}]
    assert crawler.stats.get_value("finish_reason") == "finished"


class AddonSettingDelay:
    """An add-on as Scrapy's are written: it sets values at the add-on priority."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set("DOWNLOAD_DELAY", 2.5, "addon")
        settings.set("CONCURRENT_REQUESTS", 3, "addon")


def test_addons_update_settings_below_the_projects_priority() -> None:
    crawler = Crawler(Plain, {"ADDONS": {AddonSettingDelay: 1}, "CONCURRENT_REQUESTS": 9})
    assert crawler.settings["DOWNLOAD_DELAY"] == 2.5
    assert crawler.settings["CONCURRENT_REQUESTS"] == 9  # the project's value wins
    assert [type(a) for a in crawler.addons.addons] == [AddonSettingDelay]


def test_an_addon_that_sets_a_typo_is_refused_like_any_layer() -> None:
    class Typo:
        def update_settings(self, settings: BaseSettings) -> None:
            settings.set("DEPTH_MAX", 1, "addon")

    with pytest.raises(ConfigError, match="unknown setting 'DEPTH_MAX'"):
        Crawler(Plain, {"ADDONS": {Typo: 1}})
