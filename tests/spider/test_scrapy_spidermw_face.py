"""``skitter.core.spidermw``: Scrapy's SpiderMiddlewareManager over skitter's chain, and
SPIDER_MIDDLEWARES_BASE honoured."""

from __future__ import annotations

from typing import Any

import pytest

from skitter.core.spidermw import SpiderMiddlewareManager
from skitter.exceptions import _InvalidOutput
from skitter.http import Request, Response
from skitter.spider import Spider
from skitter.utils.misc import build_from_crawler
from skitter.utils.test import get_crawler


class Doubling:
    async def process_spider_output(self, response: Any, result: Any) -> Any:
        async for obj in result:
            yield {"n": obj["n"] * 2}


class Recovering:
    def process_spider_exception(self, response: Any, exception: Exception) -> Any:
        return [{"n": -1}]


def _manager(settings: dict[str, Any]) -> SpiderMiddlewareManager:
    crawler = get_crawler(Spider, settings)
    crawler.spider = crawler._create_spider("face")
    manager = build_from_crawler(SpiderMiddlewareManager, crawler)
    assert isinstance(manager, SpiderMiddlewareManager)
    return manager


async def _scrape(manager: SpiderMiddlewareManager, callback: Any) -> list[Any]:
    request = Request("http://127.0.0.1/")
    response = Response(request.url, request=request)

    async def scrape(response: Any, request: Any) -> Any:
        return callback()

    return [obj async for obj in await manager.scrape_response_async(scrape, response, request)]


async def test_the_output_goes_through_the_middlewares_and_exceptions_are_offered() -> None:
    manager = _manager({"SPIDER_MIDDLEWARES_BASE": {}, "SPIDER_MIDDLEWARES": {Doubling: 1}})
    assert [type(mw) for mw in manager.middlewares] == [Doubling]  # no built-ins
    assert await _scrape(manager, lambda: iter([{"n": 1}, {"n": 2}])) == [{"n": 2}, {"n": 4}]

    def failing() -> Any:
        yield {"n": 1}
        raise ValueError("broken callback")

    manager._add_middleware(Recovering())  # next to the spider: it recovers first
    assert await _scrape(manager, failing) == [{"n": 2}, {"n": -2}]


async def test_a_bad_input_hook_result_is_invalid_output() -> None:
    class Bad:
        def process_spider_input(self, response: Any) -> int:
            return 1

    manager = _manager({"SPIDER_MIDDLEWARES_BASE": {}})
    manager._add_middleware(Bad())
    with pytest.raises(_InvalidOutput):
        await _scrape(manager, list)


def test_without_the_setting_the_builtins_are_there() -> None:
    manager = _manager({})
    names = [type(mw).__name__ for mw in manager.middlewares]
    assert "DepthMiddleware" in names and "HttpErrorMiddleware" in names
