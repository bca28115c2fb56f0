"""Scrapy's ways to start a crawl on a ``Crawler`` (``crawl()``, ``crawl_async()``) and to
find its running components (``get_extension()`` and friends).

skitter's own is ``await crawler.run()`` (the final stats; ``CrawlFailed`` when the crawl
did not do what was asked). Scrapy's tests and scripts call ``await crawler.crawl_async()``
(no result) or ``crawler.crawl()``, which in Scrapy is a Twisted Deferred: here too when
Twisted is installed (for ``inlineCallbacks`` code), else the asyncio Task to await. As in Scrapy, a
crawler runs once: a second ``crawl_async`` while the first runs, or after it, is refused.

``get_extension(cls)``, ``get_downloader_middleware``, ``get_spider_middleware`` and
``get_item_pipeline`` give the running instance of ``cls`` (or of a subclass), None when
there is none; they are refused (``RuntimeError``) before the crawl's components are
built, where Scrapy refuses them too (a spider's ``from_crawler`` is too early).
``get_addon(cls)`` works from the start, the add-ons being built with the crawler.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, TypeVar

from skitter.utils.defer import deferred_from_coro

__all__ = ["ScrapyCrawlAPI"]

T = TypeVar("T")


class ScrapyCrawlAPI:
    """Mixed into ``Crawler``: Scrapy's ``crawl`` and ``crawl_async``."""

    #: True from ``crawl_async`` until the crawl ends, as in Scrapy.
    crawling: bool = False
    _crawl_started: bool = False
    #: The spider's positional arguments (``crawl_async(*args)``), for its ``from_crawler``.
    _spider_args: tuple[Any, ...] = ()

    if TYPE_CHECKING:
        _spider_kwargs: dict[str, Any]
        _project: Any
        addons: Any
        engine: Any
        extensions: Any

        async def run(self) -> dict[str, Any]: ...

    async def crawl_async(self, *args: Any, **kwargs: Any) -> None:
        """Run the crawl to its end; ``args`` and ``kwargs`` are the spider's arguments."""
        if self.crawling:
            raise RuntimeError("Crawling already taking place")
        if self._crawl_started:
            raise RuntimeError(
                "Cannot run Crawler.crawl_async() more than once on the same instance: "
                "make a new Crawler for another crawl"
            )
        self.crawling = self._crawl_started = True
        self._spider_args = args
        self._spider_kwargs = {**self._spider_kwargs, **kwargs}
        try:
            await self.run()
        finally:
            self.crawling = False

    def crawl(self, *args: Any, **kwargs: Any) -> Any:
        """``crawl_async`` started on the running loop: a Deferred when Twisted is
        installed (as Scrapy's), else the Task."""
        task = asyncio.ensure_future(self.crawl_async(*args, **kwargs))
        return deferred_from_coro(task) if find_spec("twisted") is not None else task

    def get_addon(self, cls: type[T]) -> T | None:
        """The add-on that is a ``cls`` (or a subclass), None when none is."""
        return _first(cls, self.addons.addons)

    def get_downloader_middleware(self, cls: type[T]) -> T | None:
        """The running downloader middleware that is a ``cls``, None when none is."""
        return _first(cls, self._running("get_downloader_middleware").downloader.middlewares)

    def get_spider_middleware(self, cls: type[T]) -> T | None:
        """The running spider middleware that is a ``cls``, None when none is."""
        return _first(cls, self._running("get_spider_middleware").spider_mw.middlewares)

    def get_item_pipeline(self, cls: type[T]) -> T | None:
        """The running item pipeline that is a ``cls``, None when none is."""
        return _first(cls, self._running("get_item_pipeline").pipelines.pipelines)

    def get_extension(self, cls: type[T]) -> T | None:
        """The running extension that is a ``cls``, None when none is."""
        self._running("get_extension")
        return _first(cls, self.extensions.middlewares)

    def _running(self, method: str) -> Any:
        """The crawl's components; refused before the engine is there to run them."""
        if self.engine is None or self._project is None:
            raise RuntimeError(
                f"Crawler.{method}() can only be called once the crawl engine exists "
                "(from the spider's start() or later, not from its from_crawler)"
            )
        return self._project


def _first(cls: type[T], components: Iterable[Any]) -> T | None:
    return next((c for c in components if isinstance(c, cls)), None)
