"""Scrapy's ``scrapy.middleware.MiddlewareManager``: the base of a plug-in's own list of
components (a "my middlewares" setting the plug-in reads and runs in order).

A subclass names its components (``_get_mwlist_from_settings``: class paths or
classes, in order) and says which of each component's methods it collects
(``_add_middleware``; the base collects ``open_spider`` in order and ``close_spider`` in
reverse). ``from_crawler`` builds each component (``from_crawler`` when it has one); a
component that raises ``NotConfigured`` is left out, with a warning when it gave a
reason. skitter's own downloader and spider middlewares, pipelines and extensions are
run by the engine, not by this class.
"""

from __future__ import annotations

import collections
import inspect
import logging
import pprint
import typing
import warnings
from collections import abc as _abc
from typing import Any

from skitter import exceptions
from skitter.utils import misc

__all__ = ["MiddlewareManager"]

_logger = logging.getLogger(__name__)


class MiddlewareManager:
    """Components built from a setting, and their methods collected by name."""

    #: What the components are called in the log ("Enabled <name>s: ...").
    component_name: typing.ClassVar[str] = "foo middleware"

    def __init__(self, *middlewares: Any, crawler: Any = None) -> None:
        if crawler is None:
            warnings.warn(
                f"{type(self).__qualname__}.__init__() was called without the crawler "
                "argument; pass crawler=",
                exceptions.ScrapyDeprecationWarning,
                stacklevel=2,
            )
        self.crawler = crawler
        self.middlewares: tuple[Any, ...] = middlewares
        self.methods: collections.defaultdict[str, collections.deque[_abc.Callable[..., Any]]] = (
            collections.defaultdict(collections.deque)
        )
        for middleware in middlewares:
            self._add_middleware(middleware)

    @classmethod
    def _get_mwlist_from_settings(cls, settings: Any) -> _abc.Iterable[Any]:
        """The components to build, in order (class paths or classes)."""
        raise NotImplementedError(f"{cls.__qualname__} must say which components it builds")

    @classmethod
    def from_crawler(cls, crawler: Any) -> MiddlewareManager:
        middlewares, enabled = [], []
        for path in cls._get_mwlist_from_settings(crawler.settings):
            try:
                middlewares.append(misc.build_from_crawler(misc.load_object(path), crawler))
            except exceptions.NotConfigured as exc:
                if exc.args:
                    _logger.warning("Disabled %s: %s", path, exc.args[0])
                continue
            enabled.append(path)
        _logger.info("Enabled %ss:\n%s", cls.component_name, pprint.pformat(enabled))
        return cls(*middlewares, crawler=crawler)

    def _add_middleware(self, mw: Any) -> None:
        """Collect ``mw``'s methods: ``open_spider`` first to last, ``close_spider``
        last to first (the first opened is the last closed)."""
        if hasattr(mw, "open_spider"):
            self.methods["open_spider"].append(mw.open_spider)
        if hasattr(mw, "close_spider"):
            self.methods["close_spider"].appendleft(mw.close_spider)

    async def open_spider(self, spider: Any) -> None:
        """Call every collected ``open_spider`` in order, awaiting the async ones."""
        await self._call_each("open_spider", spider)

    async def close_spider(self, spider: Any) -> None:
        """Call every collected ``close_spider`` in order, awaiting the async ones."""
        await self._call_each("close_spider", spider)

    async def _call_each(self, name: str, *args: Any) -> None:
        for method in self.methods[name]:
            result = method(*args)
            if inspect.isawaitable(result):
                await result
