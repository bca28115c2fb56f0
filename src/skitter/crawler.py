"""The composition root: the only place that chooses concrete components.

``Crawler`` resolves the settings once, builds the spider and its components, and runs
them on an engine. It keeps no global state, so any number of crawls can run one after
another or side by side in one process and one event loop (no ReactorNotRestartable)::

    stats = await Crawler(MySpider, {"CONCURRENT_REQUESTS": 32}).run()
    stats = skitter.crawl(MySpider)            # the same, from synchronous code
    await run_crawlers([Crawler(A), Crawler(B)])  # several spiders on one engine

A crawl that did not do what was asked (a feed not written, the job's state lost, start requests
that broke off) raises ``CrawlFailed`` once all is closed (``stats``, ``finish_reason`` "failed",
``finish_error`` why); one its monitors failed, ``MonitorsFailed``. ``crawler.control`` is the
live control panel (``ProjectControl``); ``crawler.probe()`` the components without the engine
(``engine.Probe``). Scrapy's names: ``crawler.signals``, ``.stats``, ``.settings``, ``.addons``,
``.extensions``, ``.request_fingerprinter``, ``.engine``; ``CrawlerRunner``, ``CrawlerProcess``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skitter._clock import Clock, SystemClock
from skitter._components import load_object, named_components
from skitter._crawlapi import ScrapyCrawlAPI
from skitter._job import JobDir
from skitter._logsetup import configure_logging
from skitter._loop import loop_factory, run
from skitter._types import CrawlStats
from skitter._versions import start_lines
from skitter.addons import AddonManager
from skitter.downloader import Downloader
from skitter.downloader.wiring import crawl_resolver
from skitter.engine import (
    Engine,
    ExtensionManager,
    Probe,
    Project,
    ProjectControl,
    Stats,
    make_monitor,
)
from skitter.exceptions import ConfigError, CrawlFailed, MonitorsFailed
from skitter.frontier import Frontier, JobStore, MemoryFrontier
from skitter.monitors import Monitoring, problem
from skitter.pipelines import ItemPipelineManager
from skitter.scheduler import (
    SERVICE_RETRY_DELAYS,
    AutoThrottle,
    CircuitBreaker,
    FairShare,
    Gate,
    LeasePolicy,
    LocalGate,
    ProjectScheduler,
    RateLimits,
    RetryPolicy,
    SlotPolicies,
    SlotQueues,
    scheduler_screen,
    slot_by,
    slot_key_function,
)
from skitter.settings import ClusterSettings, EngineSettings, SchedulerSettings, Settings
from skitter.settings.wiring import check_declared, spider_layer
from skitter.signals import SignalManager
from skitter.spider import Spider, SpiderMiddlewareManager
from skitter.utils.misc import build_from_crawler

if TYPE_CHECKING:  # imported for workers only: a crawl kept elsewhere never loads redis-py
    from skitter.cluster import ClusterJob
    from skitter.downloader.wiring import RobotsCache, SessionStore, ValidatorStore

__all__ = ["Crawler", "CrawlerProcess", "CrawlerRunner", "crawl", "run_crawlers"]

log = logging.getLogger("skitter.crawler")


class Crawler(ScrapyCrawlAPI):
    """One spider class, its settings and its statistics. Satisfies ``CrawlContext``.

    Settings: ``settings`` (the project's) < ``custom_settings`` < ``env`` (``SKITTER_<NAME>``;
    none by default) < ``cli_settings``, checked (``settings._declared``, with what ``readers``, the
    run's other spiders, read) now and, with what was ``set()``, at the start, which freezes them.
    Scrapy's ``crawl()`` / ``crawl_async()`` (``_crawlapi``) run it as ``run()`` does."""

    def __init__(
        self,
        spidercls: type[Spider],
        settings: Mapping[str, Any] | Settings | None = None,
        *,
        cli_settings: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        job_dir: str | Path | None = None,
        job_mode: str = "resume",
        redis_url: str | None = None,
        job: str | None = None,
        readers: Sequence[object] = (),
        **spider_kwargs: Any,
    ) -> None:
        if not (isinstance(spidercls, type) and issubclass(spidercls, Spider)):
            raise TypeError(f"Crawler needs a Spider subclass, got {spidercls!r}")
        self.spidercls, self._readers = spidercls, readers
        self.settings = Settings.resolve(settings, spider_layer(spidercls), env, cli_settings)
        self.stats: CrawlStats = Stats()
        self.signals = SignalManager(sender=self, stats=self.stats)  # Scrapy's (skitter.signals)
        self.addons = AddonManager.for_crawler(self)  # ADDONS change settings: checked next
        check_declared(self.settings, [spidercls, *named_components(self.settings)], readers)
        engine = self.settings.view(EngineSettings)
        loop_factory(engine.asyncio_event_loop)  # a bad value is refused now
        self.extensions: ExtensionManager | None = None  # the EXTENSIONS, once built
        self.clock: Clock = clock or SystemClock()
        #: REQUEST_FINGERPRINTER_CLASS, built as Scrapy builds it.
        self.request_fingerprinter: Any = build_from_crawler(
            load_object(engine.request_fingerprinter_class), self
        )
        self.spider: Any = None
        name = spidercls.name or spidercls.__name__
        self.logger = logging.getLogger(f"skitter.crawler.{name}")
        #: The project's live control panel (see ``engine.ProjectControl``).
        self.control = ProjectControl(name, self.settings, self.stats, self.clock)
        self._spider_kwargs = spider_kwargs
        #: The running engine (None outside a crawl); writable, as in Scrapy (a test puts
        #: a stand-in there for the components that read it).
        self.engine: Engine | None = None
        self._stop_reason: str | None = None  # what ``stop`` said
        job_dir = job_dir if job_dir is not None else engine.jobdir or None  # --job-dir
        #: Where the crawl keeps its state to stop and go on (None: in memory only).
        self.job = JobDir(job_dir, job_mode) if job_dir is not None else None
        #: Set for a worker of a distributed crawl (``skitter worker``).
        self.cluster: ClusterJob | None = None
        if redis_url:
            from skitter.cluster import ClusterJob

            self.cluster = ClusterJob(redis_url, job or "")
        if self.job is not None and self.cluster is not None:
            raise ConfigError("a crawl keeps its state in a job directory or in Redis, not both")
        self._project: Project | None = None
        #: robots.txt shared with the other workers (RobotsTxtMiddleware reads it).
        self.robots_cache: RobotsCache | None = None
        #: A recrawl's validators shared with the other workers (ConditionalRecrawlMiddleware).
        self.recrawl_validators: ValidatorStore | None = None
        #: The job's session pool, shared with the other workers (SessionMiddleware).
        self.session_store: SessionStore | None = None
        self._job_store: JobStore | None = None  # the job's frontier, as the job sees it

    def build(self, mode: str = "crawl") -> Project:
        """Instantiate the spider and every component; the engine runs the result.

        ``mode`` is ``crawl`` (a batch run) or ``serve`` (long-running): it picks the
        default retry table, seconds for a batch, pyspider's hours for a service."""
        settings = self.settings
        engine, own = settings.view(EngineSettings), settings.view(SchedulerSettings)
        self.spider = spider = self._create_spider(*self._spider_args, **self._spider_kwargs)
        if not settings.frozen:  # fixed from here on: settings.set() was for until now
            check_declared(settings, [self.spidercls, *named_components(settings)], self._readers)
            settings.freeze()
        cluster = self.cluster
        lease = self._lease_policy()
        frontier: Frontier
        gate: Gate
        if cluster is not None:  # the job's frontier, gate, stats and shared stores
            frontier, gate = cluster.compose(self, spider, lease.lease_seconds)
        else:
            if self.job is not None:
                frontier = self._job_store = self.job.frontier(spider)
            else:
                frontier = MemoryFrontier()
            gate = LocalGate(self.clock)
        self.extensions = ExtensionManager.from_crawler(self)
        monitor = make_monitor(settings, self.clock, self.signals)  # traced: TRACING_ENABLED
        resolver = crawl_resolver(settings)  # one per crawl: transport and per-IP slots
        scheduler = ProjectScheduler(
            frontier,
            retry=RetryPolicy(
                self._retry_delays(spider, mode), engine.retry_times if engine.retry_enabled else 0
            ),
            slots=SlotQueues(
                SlotPolicies.from_settings(settings),
                throttle=AutoThrottle.from_settings(settings),
                await_rules=engine.robotstxt_obey,
                shared_throttle=cluster is not None,
            ),
            stats=self.stats,
            clock=self.clock,
            name=spider.name,
            breaker=CircuitBreaker(
                own.breaker_threshold, own.breaker_pause, own.breaker_probes, self.clock
            ),
            gate=gate,
            lease=lease,
            rate=own.rate if (r := getattr(spider, "rate", None)) is None else r,  # 0 too
            burst=own.burst if (b := getattr(spider, "burst", None)) is None else b,
            limits=RateLimits(own.max_rate, own.max_burst),
            slot_of=slot_key_function(slot_by(settings), resolver.first),
            screen=scheduler_screen(self, spider),
        )
        self._project = Project(
            name=spider.name,
            spider=spider,
            settings=settings,
            stats=self.stats,
            scheduler=scheduler,
            downloader=Downloader(self, spider, resolver=resolver),
            spider_mw=SpiderMiddlewareManager.from_crawler(self, spider, monitor.spider_hooks),
            pipelines=ItemPipelineManager.from_crawler(self),
            monitor=monitor,
            clock=self.clock,
            signals=self.signals,
        )
        if cluster is not None:  # the job's start claim, and its record of the outcomes
            claim = self._project.start_claim = cluster.start_claim(lease.lease_seconds)
            self._project.starts = claim
        if cluster is not None or self._project.pipelines.sinks:  # items stored, then ack
            self._project.flush_feeds_before_ack = True
        self.control.attach(self._project, self._wake)
        Monitoring.from_crawler(self, self._project.pipelines)  # it listens to the signals
        return self._project

    async def open_job(self) -> None:
        """Load the job directory, if any: resume, fresh or recrawl (after ``build``)."""
        if self.job is not None and self._project is not None and self._job_store is not None:
            await self.job.open(self._project, self._job_store)
        if self.cluster is not None and self._project is not None:
            await self.cluster.open(self._project, self.settings, self.control)

    def _create_spider(self, *args: Any, **kwargs: Any) -> Spider:  # Scrapy's name, for its tests
        return self.spidercls.from_crawler(self, *args, **kwargs)

    def probe(self) -> Probe:  # one request at a time: shell, fetch, parse, check
        return Probe(self.build())

    def _lease_policy(self) -> LeasePolicy:
        settings = self.settings
        try:
            if self.cluster is not None:  # the other workers take the rest of the tasks
                return LeasePolicy(
                    lease_seconds=settings.view(ClusterSettings).lease_seconds,
                    max_held=2 * settings.view(EngineSettings).concurrent_requests,
                    owner=self.cluster.owner,
                    eager=False,
                )
            return LeasePolicy(
                lease_seconds=settings.view(SchedulerSettings).processing_timeout,
                max_held=settings.view(SchedulerSettings).scheduler_max_held,
                # Enough for every download slot to start its next tasks; beyond it the
                # queue waits packed in the frontier (a few hundred bytes a task).
                eager_held=2 * settings.view(EngineSettings).concurrent_requests,
            )
        except ValueError as exc:  # e.g. PROCESSING_TIMEOUT=0: no lease could last
            names = ("PROCESSING_TIMEOUT, SCHEDULER_MAX_HELD", "LEASE_SECONDS, CONCURRENT_REQUESTS")
            raise ConfigError(f"scheduler settings ({names[bool(self.cluster)]}): {exc}") from None

    def _retry_delays(self, spider: Spider, mode: str) -> Any:
        """The spider's ``retry_delay``, else RETRY_DELAYS if set, else the mode's table."""
        own = getattr(spider, "retry_delay", None)
        if own:
            return own
        if mode == "serve" and self.settings.source("RETRY_DELAYS") == "default":
            return SERVICE_RETRY_DELAYS
        return self.settings.view(EngineSettings).retry_delays

    def _wake(self) -> None:
        if self.engine is not None:
            self.engine.wake()

    @property
    def failure(self) -> str | None:
        """Why the crawl failed (it did not, or could not, do what was asked), or None."""
        return self.control.failure

    async def cluster_stats(self) -> dict[str, Any]:
        """A worker's view of the whole job's statistics, summed over every worker."""
        if self.cluster is None:
            raise RuntimeError("cluster_stats() is for workers (redis_url=...)")
        return await self.cluster.totals()

    async def run(self) -> dict[str, Any]:
        """Crawl to the end and return the final statistics; raises ``CrawlFailed`` (with
        them) if the crawl did not do what was asked."""
        await _run_engine([self])
        _raise_failures([self])
        return self.stats.to_dict()

    def stop(self, reason: str = "shutdown") -> None:
        """Stop gracefully: no new downloads; running ones finish within SHUTDOWN_TIMEOUT
        (before the run: as soon as it starts)."""
        self._stop_reason = reason
        if self.engine is not None:
            self.engine.stop(reason)


def _raise_failures(crawlers: Sequence[Crawler]) -> None:
    error, why = CrawlFailed, {c: str(c.failure) for c in crawlers if c.failure is not None}
    if not why:  # each did its work; do its monitors (``monitors.problem``) fail it?
        error, why = MonitorsFailed, {c: p for c in crawlers if (p := problem(c.stats))}
    if not why:
        return
    failures = [(c.spider.name, str(reason)) for c, reason in why.items()]
    (name, reason), failed = failures[0], next(iter(why))
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    message = f"crawl of spider {name!r} failed: {reason}{more}"
    raise error(message, stats=failed.stats.to_dict(), failures=failures)


async def _run_engine(crawlers: Sequence[Crawler], mode: str = "crawl") -> None:
    projects = [crawler.build(mode) for crawler in crawlers]
    vs = [(c.settings.view(EngineSettings), c.settings.view(SchedulerSettings)) for c in crawlers]
    first, share = vs[0]
    engine = Engine(
        projects,
        concurrency=max(own.concurrent_requests for own, _ in vs),
        shutdown_timeout=first.shutdown_timeout,
        # Upkeep (lease renewal, reclaim) runs several times per lease, at most each second.
        housekeeping_interval=min(1.0, min(own.processing_timeout for _, own in vs) / 5),
        serve=mode == "serve",
        idle_grace=first.worker_idle_timeout if any(c.cluster for c in crawlers) else 0.0,
        outage_timeout=share.frontier_outage_timeout,
        clock=crawlers[0].clock,
        fair_share=FairShare(share.fairshare_min, share.fairshare_max, share.fairshare_window),
    )
    for crawler, own in zip(crawlers, projects, strict=True):
        view = crawler.settings.view(EngineSettings)
        for line in start_lines(view.bot_name, crawler.spider.name, view.log_versions):
            log.info("%s", line)
        crawler.engine = engine
        try:
            await crawler.open_job()
        except BaseException:
            # Refused before anything ran: release every job (its lock) and say why.
            for project in projects:
                with contextlib.suppress(Exception):
                    await project.scheduler.frontier.close()
            raise
        if crawler._stop_reason is not None:  # stopped before it ran
            own.request_close(crawler._stop_reason)
    try:
        await engine.run()
    finally:
        for crawler in crawlers:
            if crawler.cluster is not None:
                await crawler.cluster.close(crawler.settings)


async def run_crawlers(
    crawlers: Sequence[Crawler], *, mode: str = "crawl", raise_on_failure: bool = True
) -> list[dict[str, Any]]:
    """Run several crawlers on one engine, sharing its concurrency (and dispatching by
    fair share); their statistics. If any crawl failed, ``CrawlFailed`` is raised after
    all have ended (``raise_on_failure=False``: look at each ``crawler.failure`` instead).

    ``mode="serve"`` keeps running when idle: periodic ``@every`` callbacks, recrawls
    when ``age`` expires, retries on pyspider's table; it ends on ``stop()``."""
    if mode not in ("crawl", "serve"):
        raise ValueError(f"mode must be 'crawl' or 'serve', got {mode!r}")
    if crawlers:
        await _run_engine(crawlers, mode)
    if raise_on_failure:
        _raise_failures(crawlers)
    return [crawler.stats.to_dict() for crawler in crawlers]


def crawl(
    spidercls: type[Spider], settings: Mapping[str, Any] | None = None, **spider_kwargs: Any
) -> dict[str, Any]:
    """Run a crawl from synchronous code (a script, a notebook cell without a loop)."""
    crawler = Crawler(spidercls, settings, **spider_kwargs)
    return run(crawler.run(), crawler.settings.view(EngineSettings).asyncio_event_loop)


class CrawlerRunner:
    """Scrapy's ``CrawlerRunner``, for a program running its own event loop: ``crawl``
    starts a crawl (its own engine) and returns its task, whose result is the stats;
    ``join`` waits for every crawl started."""

    def __init__(self, settings: Mapping[str, Any] | Settings | None = None) -> None:
        self.settings = settings
        self.crawlers: set[Crawler] = set()
        self._tasks: set[asyncio.Task[dict[str, Any]]] = set()

    def create_crawler(self, spidercls: Crawler | type[Spider], **kwargs: Any) -> Crawler:
        """``kwargs`` are the spider's arguments (``-a name=value``), by keyword only."""
        if isinstance(spidercls, Crawler) and not kwargs:
            return spidercls
        if isinstance(spidercls, Crawler):
            raise TypeError("spider arguments go to Crawler(...) when a Crawler is given")
        return Crawler(spidercls, self.settings, **kwargs)

    def crawl(self, spidercls: Crawler | type[Spider], **kwargs: Any) -> Any:
        crawler = self.create_crawler(spidercls, **kwargs)
        task = asyncio.ensure_future(crawler.run())
        self.crawlers.add(crawler)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: self.crawlers.discard(crawler))
        return task

    async def join(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def stop(self) -> None:
        """Stop every running crawl gracefully."""
        for crawler in list(self.crawlers):
            crawler.stop()


class CrawlerProcess(CrawlerRunner):
    """Scrapy's ``CrawlerProcess``, for a script without an event loop: ``crawl`` queues,
    ``start`` runs the queued crawls together until all end. A failed crawl is logged, not
    raised (as in Scrapy; ``failures`` lists them); Ctrl-C cancels the crawls, which close
    their feeds and jobs. Logging follows LOG_* unless the root logger has a handler (or
    ``install_root_handler=False``). Both run on asyncio: they are Scrapy's Async* too."""

    def __init__(
        self,
        settings: Mapping[str, Any] | Settings | None = None,
        install_root_handler: bool = True,
    ) -> None:
        super().__init__(settings)
        self._queued: list[Crawler] = []
        self.failures: list[BaseException] = []
        if install_root_handler and not logging.getLogger().handlers:
            configure_logging(Settings.resolve(dict(settings) if settings else None))

    def crawl(self, spidercls: Crawler | type[Spider], **kwargs: Any) -> None:
        self._queued.append(self.create_crawler(spidercls, **kwargs))

    def start(self, stop_after_crawl: bool = True, install_signal_handlers: bool = True) -> None:
        if not stop_after_crawl:
            raise ValueError("CrawlerProcess.start() ends with its crawls (no Twisted reactor)")
        loops = [c.settings.view(EngineSettings).asyncio_event_loop for c in self._queued[:1]]
        run(self._run_queued(), *loops)

    async def _run_queued(self) -> None:
        queued, self._queued = self._queued, []
        runs = [CrawlerRunner.crawl(self, crawler) for crawler in queued]
        for outcome in await asyncio.gather(*runs, return_exceptions=True):
            if isinstance(outcome, BaseException):
                log.error("%s", outcome, exc_info=not isinstance(outcome, CrawlFailed))
                self.failures.append(outcome)


AsyncCrawlerRunner, AsyncCrawlerProcess = CrawlerRunner, CrawlerProcess  # Scrapy 2.13 names
