"""Scrapy's ways to start a crawl on a ``Crawler``: ``crawl()`` and ``crawl_async()``.

skitter's own is ``await crawler.run()`` (the final stats; ``CrawlFailed`` when the crawl
did not do what was asked). Scrapy's tests and scripts call ``await crawler.crawl_async()``
(no result) or ``crawler.crawl()``, which in Scrapy is a Twisted Deferred: here too when
Twisted is installed (for ``inlineCallbacks`` code), else the asyncio Task to await.
"""

from __future__ import annotations

import asyncio
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from skitter.utils.defer import deferred_from_coro

__all__ = ["ScrapyCrawlAPI"]


class ScrapyCrawlAPI:
    """Mixed into ``Crawler``: Scrapy's ``crawl`` and ``crawl_async``."""

    if TYPE_CHECKING:
        _spider_kwargs: dict[str, Any]

        async def run(self) -> dict[str, Any]: ...

    async def crawl_async(self, *args: Any, **kwargs: Any) -> None:
        """Run the crawl to its end; ``kwargs`` are the spider's arguments."""
        if args:
            raise TypeError("spider arguments go by keyword (crawl_async(name=value))")
        self._spider_kwargs = {**self._spider_kwargs, **kwargs}
        await self.run()

    def crawl(self, *args: Any, **kwargs: Any) -> Any:
        """``crawl_async`` started on the running loop: a Deferred when Twisted is
        installed (as Scrapy's), else the Task."""
        task = asyncio.ensure_future(self.crawl_async(*args, **kwargs))
        return deferred_from_coro(task) if find_spec("twisted") is not None else task
