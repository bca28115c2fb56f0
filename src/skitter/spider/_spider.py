"""The Spider base class, as a Scrapy user knows it.

A spider is plain Python: class attributes for its name, start URLs and settings, the
first requests from ``async def start()`` (Scrapy 2.13's way: requests and items) or
``start_requests()`` (a list, a generator or an async generator; the default ``start()``
yields what it gives), pulled lazily so a million start URLs never sit in memory, and
callbacks of any kind (function, coroutine, generator, async generator).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterable, AsyncIterator, Iterable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from skitter._failure import Failure
from skitter.exceptions import ScrapyDeprecationWarning
from skitter.http import Request, Response
from skitter.spider._middleware import aiter_output

if TYPE_CHECKING:
    from skitter._types import CrawlContext
    from skitter.settings import BaseSettings, Setting, Settings, View

__all__ = ["Spider"]


class _SpiderLogger(logging.LoggerAdapter[logging.Logger]):
    """The spider's logger, named after the spider as in Scrapy; ``exc_info=failure``
    (an errback's Failure) logs the failure's exception and traceback."""

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        exc_info = kwargs.get("exc_info")
        if isinstance(exc_info, Failure):
            kwargs["exc_info"] = exc_info.value
        kwargs.setdefault("extra", self.extra)
        return msg, kwargs


class Spider:
    """Subclass it, set ``name`` and ``start_urls``, write ``parse``."""

    name: ClassVar[str] = ""
    # Not ClassVars: a spider may set these per instance, in __init__ (as Scrapy's do).
    start_urls: Iterable[str] = ()
    #: Hosts the crawl may download from (skitter.http.Scope); empty: every host.
    allowed_domains: Iterable[str] = ()
    custom_settings: ClassVar[dict[str, Any]] = {}
    #: Settings of its own that the spider reads but never names in its code (built at
    #: run time): names, "PREFIX_*" prefixes, Setting rows, View classes. A name the
    #: code holds (``self.settings.get("API_KEY")``) needs none (skitter.settings._declared).
    declared_settings: ClassVar[Sequence[str | Setting | type[View]]] = ()
    handle_httpstatus_list: ClassVar[Iterable[int]] = ()

    crawler: CrawlContext
    settings: Settings

    def __init__(self, name: str | None = None, **kwargs: Any) -> None:
        if name is not None:
            self.name = name  # type: ignore[misc]
        if not self.name:
            self.name = type(self).__name__  # type: ignore[misc]
        for key, value in kwargs.items():
            setattr(self, key, value)
        if self.start_urls == ():  # the class default: a list of its own, as in Scrapy
            self.start_urls = []
        #: A dict that survives pause/resume when the crawl has a job directory.
        self.state: dict[str, Any] = {}

    @classmethod
    def from_crawler(cls, crawler: CrawlContext, *args: Any, **kwargs: Any) -> Spider:
        """Scrapy's hook: build the spider for ``crawler`` (``spider.crawler`` and
        ``spider.settings`` are set). Override it to connect signals, calling this first."""
        spider = cls(*args, **kwargs)
        spider.crawler = crawler
        spider.settings = crawler.settings
        return spider

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """Scrapy's hook: lay the spider's ``custom_settings`` into ``settings`` at the
        spider's priority (a value set with a higher one, the command line's, stays)."""
        settings.setdict(cls.custom_settings or {}, priority="spider")

    @property
    def logger(self) -> logging.LoggerAdapter[logging.Logger]:
        """A logger named after the spider (as Scrapy's), with ``extra={"spider": ...}``."""
        return _SpiderLogger(logging.getLogger(self.name), {"spider": self})

    def log(self, message: Any, level: int = logging.DEBUG, **kw: Any) -> None:
        """Scrapy's deprecated ``Spider.log``: ``self.logger.log(level, message)``."""
        warnings.warn(
            "Spider.log() is deprecated, use self.logger instead",
            ScrapyDeprecationWarning,
            stacklevel=2,
        )
        self.logger.log(level, message, **kw)

    async def start(self) -> AsyncIterator[Any]:
        """The first requests (and items) of the crawl, as Scrapy 2.13+ spiders write it:
        override it as an async generator. The default yields what ``start_requests()``
        gives, so spiders written the older way keep working."""
        async for obj in aiter_output(self.start_requests()):
            yield obj

    def start_requests(self) -> Iterable[Request] | AsyncIterable[Request]:
        """The first requests. Start URLs skip the dupe filter, as in Scrapy."""
        return (Request(url, dont_filter=True) for url in self.start_urls)

    def parse(self, response: Response) -> Any:
        """The default callback."""
        raise NotImplementedError(f"{type(self).__name__}.parse callback is not defined")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
