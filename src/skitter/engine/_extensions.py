"""Extensions (the EXTENSIONS setting): a project's own components that act on signals.

As in Scrapy, an extension is any class built at start, with ``from_crawler(crawler)``
when it has one; it does its work by connecting handlers to ``crawler.signals`` and
reading ``crawler.settings`` and ``crawler.stats``. Nothing calls it afterwards, so an
extension costs the crawl only the signals it listens to. ``NotConfigured`` from its
constructor leaves it out. skitter has no built-in extensions: what Scrapy's do (core
stats, CLOSESPIDER_*, LOGSTATS_INTERVAL, AutoThrottle, the job directory) is built in.
"""

from __future__ import annotations

from typing import Any

from skitter._components import build_components
from skitter._types import CrawlContext
from skitter.exceptions import ConfigError
from skitter.extensions.feedexport import FeedExporter
from skitter.logformatter import install_log_formatter
from skitter.settings import EngineSettings

__all__ = ["ExtensionManager"]


class ExtensionManager:
    """The crawl's extensions, in EXTENSIONS order (``crawler.extensions``)."""

    def __init__(self, extensions: list[Any]) -> None:
        #: Scrapy's name for the built extensions.
        self.middlewares = extensions

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> ExtensionManager:
        # LOG_FORMATTER first: the pipelines and the engine, built next, ask for it.
        setattr(crawler, "log_formatted", install_log_formatter(crawler))  # noqa: B010
        built = build_components({}, crawler.settings.view(EngineSettings).extensions, crawler)
        for extension in built:
            if isinstance(extension, FeedExporter):
                raise ConfigError(
                    f"EXTENSIONS: {type(extension).__qualname__} is Scrapy's feed-export "
                    "extension; skitter writes FEEDS itself (its feed pipeline), so this "
                    "extension would write every feed a second time: remove it from "
                    "EXTENSIONS"
                )
        return cls(built)
