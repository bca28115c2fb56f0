"""``BaseSpiderMiddleware``: Scrapy 2.13's base for spider middlewares that look at each
request and item a callback (or the spider's start) yields, one at a time.

A subclass overrides ``get_processed_request(request, response)`` and/or
``get_processed_item(item, response)``, returning the object (changed or not), or None
to drop it; ``response`` is None for start requests. The base class supplies the hooks
that feed them: the async ``process_spider_output_async`` and ``process_start``, which
skitter's chain calls, and their sync twins ``process_spider_output`` and
``process_start_requests``, which code written for older Scrapy may call directly.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from skitter.http import Request

__all__ = ["BaseSpiderMiddleware"]


class BaseSpiderMiddleware:
    """Calls ``get_processed_request`` or ``get_processed_item`` for every object that
    passes, in order, and leaves out those it returns None for."""

    def __init__(self, crawler: Any = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> BaseSpiderMiddleware:
        return cls(crawler)

    def get_processed_request(self, request: Request, response: Any) -> Request | None:
        """The request to pass on (this one, another, or None to drop it)."""
        return request

    def get_processed_item(self, item: Any, response: Any) -> Any:
        """The item to pass on (this one, another, or None to drop it)."""
        return item

    def _processed(self, obj: Any, response: Any) -> Any:
        if isinstance(obj, Request):
            return self.get_processed_request(obj, response)
        return self.get_processed_item(obj, response)

    async def process_start(self, start: AsyncIterable[Any]) -> AsyncIterator[Any]:
        async for obj in start:
            if (obj := self._processed(obj, None)) is not None:
                yield obj

    def process_start_requests(self, start: Iterable[Any], spider: Any = None) -> Iterator[Any]:
        for obj in start:
            if (obj := self._processed(obj, None)) is not None:
                yield obj

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterable[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for obj in result:
            if (obj := self._processed(obj, response)) is not None:
                yield obj

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        for obj in result:
            if (obj := self._processed(obj, response)) is not None:
                yield obj
