"""Scrapy's ``scrapy.core.spidermw``: ``SpiderMiddlewareManager`` with Scrapy's methods.

skitter's crawl runs its spider middlewares through ``skitter.spider.SpiderMiddlewareManager``
(composed once per crawl). This face is for code written against Scrapy's manager: built
with ``build_from_crawler`` from ``SPIDER_MIDDLEWARES``, added to by hand
(``_add_middleware``), inspected through ``methods``, run with
``scrape_response_async(scrape_func, response, request)`` and ``process_start()``. The
running is skitter's own chain (the same routing of output and exceptions as a crawl),
recomposed when a middleware is added.

``methods["process_spider_output"]`` says what Scrapy would run for each middleware: the
async generator (``process_spider_output_async`` of a "universal" middleware), the plain
method when that is all there is, or None for a middleware whose pair of methods
contradicts itself (logged, as Scrapy logs it). The chain itself treats such a middleware
as a crawl does (``skitter.spider``), which also accepts a plain ``process_spider_output``
(its input collected first), where Scrapy 2.13 refuses one.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from skitter._components import merge_components
from skitter.exceptions import ScrapyDeprecationWarning
from skitter.middleware import MiddlewareManager
from skitter.settings import SpiderSettings
from skitter.spider import SPIDER_MIDDLEWARES_BASE, aiter_output
from skitter.spider import SpiderMiddlewareManager as _Chain

__all__ = ["SpiderMiddlewareManager"]

log = logging.getLogger(__name__)

ScrapeFunc = Callable[[Any, Any], Awaitable[Any]]


class SpiderMiddlewareManager(MiddlewareManager):
    """Scrapy's spider middleware manager over skitter's spider middleware chain."""

    component_name = "spider middleware"

    def __init__(self, *middlewares: Any, crawler: Any = None) -> None:
        self._chain: _Chain | None = None
        self._added: list[Any] = []
        super().__init__(*middlewares, crawler=crawler)

    @classmethod
    def _get_mwlist_from_settings(cls, settings: Any) -> Iterable[Any]:
        view = settings.view(SpiderSettings)
        base = view.spider_middlewares_base
        return merge_components(
            SPIDER_MIDDLEWARES_BASE if base is None else base, view.spider_middlewares
        )

    def _add_middleware(self, mw: Any) -> None:
        super()._add_middleware(mw)
        self._added.append(mw)
        self._chain = None
        methods = self.methods
        if hasattr(mw, "process_spider_input"):
            methods["process_spider_input"].append(mw.process_spider_input)
        if hasattr(mw, "process_start"):
            methods["process_start"].appendleft(mw.process_start)
        if hasattr(mw, "process_spider_output") or hasattr(mw, "process_spider_output_async"):
            methods["process_spider_output"].appendleft(_output_method(mw))  # type: ignore[arg-type]
        if hasattr(mw, "process_spider_exception"):
            methods["process_spider_exception"].appendleft(mw.process_spider_exception)

    def _spider(self) -> Any:
        return getattr(self.crawler, "spider", None)

    def _composed(self, spider: Any = None) -> _Chain:
        if self._chain is None:
            self._chain = _Chain(self._added, spider if spider is not None else self._spider())
        return self._chain

    async def scrape_response_async(
        self, scrape_func: ScrapeFunc, response: Any, request: Any
    ) -> AsyncIterator[Any]:
        """The callback's output (``scrape_func(response, request)``) through the chain:
        ``process_spider_input`` first; an exception there or in the callback goes to
        ``process_spider_exception``, as in a crawl."""
        chain = self._composed()
        try:
            await chain.process_input(response)
            result = await scrape_func(response, request)
        except Exception as exc:
            recovered = await chain.process_exception(response, exc)
            if recovered is None:
                raise
            return recovered
        return chain.process_output(response, aiter_output(result))

    async def process_start(self, spider: Any = None) -> AsyncIterator[Any]:
        """The spider's ``start()`` through every ``process_start``."""
        if spider is not None:
            if self.crawler is not None:
                warnings.warn(
                    "Passing a spider argument to SpiderMiddlewareManager.process_start() "
                    "is deprecated and the passed value is ignored",
                    ScrapyDeprecationWarning,
                    stacklevel=2,
                )
                spider = None
            else:
                warnings.warn(
                    "Passing a spider argument to SpiderMiddlewareManager.process_start() "
                    "is deprecated, SpiderMiddlewareManager should be instantiated with a "
                    "Crawler",
                    ScrapyDeprecationWarning,
                    stacklevel=2,
                )
        spider = spider if spider is not None else self._spider()
        return self._composed(spider).process_start_requests(aiter(spider.start()))


def _output_method(mw: Any) -> Callable[..., Any] | None:
    """What Scrapy runs as ``mw``'s output hook (see the module docstring)."""
    name = type(mw).__qualname__
    plain: Callable[..., Any] | None = getattr(mw, "process_spider_output", None)
    modern: Callable[..., Any] | None = getattr(mw, "process_spider_output_async", None)
    if modern is None:
        return plain
    if plain is None:
        log.warning(
            "Middleware %s has process_spider_output_async() without process_spider_output()",
            name,
        )
        return None
    if not inspect.isasyncgenfunction(modern):
        log.warning("%s.process_spider_output_async is not an async generator function", name)
        return plain
    if inspect.isasyncgenfunction(plain):
        log.warning(
            "%s.process_spider_output is an async generator function while "
            "process_spider_output_async() exists",
            name,
        )
        return None
    return modern
