"""The composition root: the only place that chooses concrete components.

``Crawler`` resolves the settings once, builds the spider and its components, and runs
them on an engine. It keeps no global state, so any number of crawls can run one after
another or side by side in one process and one event loop (no ReactorNotRestartable)::

    stats = await Crawler(MySpider, {"CONCURRENT_REQUESTS": 32}).run()
    stats = skitter.crawl(MySpider)            # the same, from synchronous code
    await run_crawlers([Crawler(A), Crawler(B)])  # several spiders on one engine
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter.downloader import Downloader
from skitter.engine import Engine, Project, Stats
from skitter.frontier import MemoryFrontier
from skitter.pipelines import ItemPipelineManager
from skitter.scheduler import ProjectScheduler, RetryPolicy, SlotTable
from skitter.settings import Settings
from skitter.spider import Spider, SpiderMiddlewareManager

__all__ = ["Crawler", "crawl", "run_crawlers"]


class Crawler:
    """One spider class, its settings and its statistics. Satisfies ``CrawlContext``."""

    def __init__(
        self,
        spidercls: type[Spider],
        settings: Mapping[str, Any] | Settings | None = None,
        *,
        cli_settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        **spider_kwargs: Any,
    ) -> None:
        if not (isinstance(spidercls, type) and issubclass(spidercls, Spider)):
            raise TypeError(f"Crawler needs a Spider subclass, got {spidercls!r}")
        project = dict(settings) if isinstance(settings, Settings) else settings
        self.spidercls = spidercls
        self.settings = Settings.resolve(
            project=project,
            spider=getattr(spidercls, "custom_settings", None),
            env=env,
            cli=cli_settings,
        )
        self.stats = Stats()
        self.clock: Clock = clock or SystemClock()
        self.spider: Any = None
        self.logger = logging.getLogger(f"skitter.crawler.{spidercls.name or spidercls.__name__}")
        self._spider_kwargs = spider_kwargs
        self._engine: Engine | None = None

    def build(self) -> Project:
        """Instantiate the spider and every component; the engine runs the result."""
        settings = self.settings
        self.spider = spider = self.spidercls.from_crawler(self, **self._spider_kwargs)
        retries = settings["RETRY_TIMES"] if settings["RETRY_ENABLED"] else 0
        delays = getattr(spider, "retry_delay", None) or settings["RETRY_DELAYS"]
        scheduler = ProjectScheduler(
            MemoryFrontier(),
            retry=RetryPolicy(delays, retries),
            slots=SlotTable(
                settings["CONCURRENT_REQUESTS_PER_DOMAIN"],
                settings["DOWNLOAD_DELAY"],
                settings["RANDOMIZE_DOWNLOAD_DELAY"],
            ),
            stats=self.stats,
            clock=self.clock,
        )
        return Project(
            name=spider.name,
            spider=spider,
            settings=settings,
            stats=self.stats,
            scheduler=scheduler,
            downloader=Downloader(self, spider),
            spider_mw=SpiderMiddlewareManager.from_crawler(self, spider),
            pipelines=ItemPipelineManager.from_crawler(self),
        )

    async def run(self) -> dict[str, Any]:
        """Crawl to the end and return the final statistics."""
        await _run_engine([self])
        return self.stats.to_dict()

    def stop(self, reason: str = "shutdown") -> None:
        """Stop gracefully: no new downloads; running ones finish within SHUTDOWN_TIMEOUT."""
        if self._engine is not None:
            self._engine.stop(reason)

    @property
    def engine(self) -> Engine | None:
        return self._engine


async def _run_engine(crawlers: Sequence[Crawler]) -> None:
    projects = [crawler.build() for crawler in crawlers]
    first = crawlers[0].settings
    engine = Engine(
        projects,
        concurrency=max(c.settings["CONCURRENT_REQUESTS"] for c in crawlers),
        shutdown_timeout=first["SHUTDOWN_TIMEOUT"],
    )
    for crawler in crawlers:
        crawler._engine = engine
    await engine.run()


async def run_crawlers(crawlers: Sequence[Crawler]) -> list[dict[str, Any]]:
    """Run several crawlers on one engine, sharing its concurrency; their statistics."""
    if not crawlers:
        return []
    await _run_engine(crawlers)
    return [crawler.stats.to_dict() for crawler in crawlers]


def crawl(
    spidercls: type[Spider], settings: Mapping[str, Any] | None = None, **spider_kwargs: Any
) -> dict[str, Any]:
    """Run a crawl from synchronous code (a script, a notebook cell without a loop)."""
    return asyncio.run(Crawler(spidercls, settings, **spider_kwargs).run())
