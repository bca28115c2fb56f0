"""``skitter.middleware.MiddlewareManager``: Scrapy's base for a plug-in's own component
list, built from a setting, with components that opt out (NotConfigured) left out."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from skitter.exceptions import NotConfigured, ScrapyDeprecationWarning
from skitter.middleware import MiddlewareManager
from skitter.utils.test import get_crawler

calls: list[str] = []


class _First:
    def open_spider(self, spider: Any) -> None:
        calls.append("open first")

    async def close_spider(self, spider: Any) -> None:
        calls.append("close first")


class _Second:
    @classmethod
    def from_crawler(cls, crawler: Any) -> _Second:
        instance = cls()
        instance.crawler = crawler
        return instance

    async def open_spider(self, spider: Any) -> None:
        calls.append("open second")

    def close_spider(self, spider: Any) -> None:
        calls.append("close second")


class _Off:
    def __init__(self) -> None:
        raise NotConfigured("switched off")


class _Manager(MiddlewareManager):
    component_name = "thing"

    @classmethod
    def _get_mwlist_from_settings(cls, settings: Any) -> list[Any]:
        return [_First, _Off, _Second]


async def test_built_from_the_list_opened_in_order_closed_in_reverse(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls.clear()
    crawler = get_crawler()
    with caplog.at_level(logging.INFO, logger="skitter.middleware"):
        manager = _Manager.from_crawler(crawler)
    assert [type(m) for m in manager.middlewares] == [_First, _Second]
    assert manager.middlewares[1].crawler is crawler
    assert "Disabled" in caplog.text and "switched off" in caplog.text
    await manager.open_spider(None)
    await manager.close_spider(None)
    assert calls == ["open first", "open second", "close second", "close first"]


def test_without_a_crawler_it_warns() -> None:
    with pytest.warns(ScrapyDeprecationWarning, match="without the crawler"):
        manager = _Manager(_First())
    assert manager.crawler is None
