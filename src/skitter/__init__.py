"""skitter: an asyncio-native web crawling framework.

Scrapy's way of writing spiders, pyspider's scheduler, scrapy-redis's distribution, on
plain asyncio. The names below are the public API; everything in a ``_module`` is not.
They are imported on first use, so ``import skitter.http`` does not load the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from skitter._version import __version__

#: The version as a tuple of ints (and strings for parts such as ``dev1``), as Scrapy's.
version_info = tuple(int(part) if part.isdigit() else part for part in __version__.split("."))

_EXPORTS = {
    "CloseSpider": "skitter.exceptions",
    "ConfigError": "skitter.exceptions",
    "CrawlFailed": "skitter.exceptions",
    "Crawler": "skitter.crawler",
    "DropItem": "skitter.exceptions",
    "Field": "skitter.item",
    "FormRequest": "skitter.http",
    "HttpError": "skitter.exceptions",
    "IgnoreRequest": "skitter.exceptions",
    "Item": "skitter.item",
    "Request": "skitter.http",
    "Response": "skitter.http",
    "RetryLater": "skitter.exceptions",
    "Selector": "skitter.selector",
    "Settings": "skitter.settings",
    "SkitterError": "skitter.exceptions",
    "Spider": "skitter.spider",
    "config": "skitter.spider",
    "crawl": "skitter.crawler",
    "every": "skitter.spider",
    "run_crawlers": "skitter.crawler",
}

__all__ = [  # literal, so tools see it; tests/test_public_api.py pins it to _EXPORTS
    "CloseSpider",
    "ConfigError",
    "CrawlFailed",
    "Crawler",
    "DropItem",
    "Field",
    "FormRequest",
    "HttpError",
    "IgnoreRequest",
    "Item",
    "Request",
    "Response",
    "RetryLater",
    "Selector",
    "Settings",
    "SkitterError",
    "Spider",
    "__version__",
    "config",
    "crawl",
    "every",
    "run_crawlers",
    "version_info",
]

if TYPE_CHECKING:
    from skitter.crawler import Crawler, crawl, run_crawlers
    from skitter.exceptions import (
        CloseSpider,
        ConfigError,
        CrawlFailed,
        DropItem,
        HttpError,
        IgnoreRequest,
        RetryLater,
        SkitterError,
    )
    from skitter.http import FormRequest, Request, Response
    from skitter.item import Field, Item
    from skitter.selector import Selector
    from skitter.settings import Settings
    from skitter.spider import Spider, config, every


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skitter' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
