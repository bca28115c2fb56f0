"""Scrapy's ``scrapy.utils.spider``: a spider for components tested without one, and a
callback's output as an iterable."""

from __future__ import annotations

import inspect
from typing import Any

from skitter.spider import Spider
from skitter.utils.misc import arg_to_iter

__all__ = ["DefaultSpider", "iterate_spider_output"]


class DefaultSpider(Spider):
    """The spider Scrapy's test helpers use when none is given."""

    name = "default"


def iterate_spider_output(result: Any) -> Any:
    """A callback's result as something to iterate: async generators and coroutines
    as they are (the caller awaits them), anything else through ``arg_to_iter``."""
    if inspect.isasyncgen(result) or inspect.iscoroutine(result):
        return result
    return arg_to_iter(result)
