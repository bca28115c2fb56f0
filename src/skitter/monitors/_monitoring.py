"""``Monitoring``: runs a crawl's monitors, alerts, keeps its run history, writes its
report.

The crawler builds one (``Monitoring.from_crawler``) when the settings ask for monitors
or item validation; otherwise there is none, and the crawl pays nothing. It listens to
two signals: ``spider_opened`` starts the periodic runs (each group of monitors every
so many seconds on the crawl's clock), ``spider_closed`` (sent once ``finish_reason`` is
known) runs every monitor once more, then:

1. counts the results (``monitors/passed``, ``monitors/failed``, ``monitors/warned``,
   ``monitors/status``: passed, warned or failed; ``monitors/summary``: what failed);
2. alerts (ALERT_ON: on a failure, a warning too, or always);
3. writes the report (``_report``) and hands it to the dashboard (``control.report``);
4. remembers the run (``_history``) for the next run's item_count_change.

A run whose monitors fail at the "fail" level, or whose alert or report could not be
delivered, is not a success: ``problem(stats)`` says why, ``Crawler.run()`` raises
``MonitorsFailed``, and the command exits with 3.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

from skitter._secrets import mask_text
from skitter._tasks import Background, periodic
from skitter._types import CrawlContext, CrawlStats
from skitter.exceptions import ConfigError, NotConfigured
from skitter.monitors._alerts import (
    Alert,
    Alerts,
    Channel,
    EmailChannel,
    LogChannel,
    WebhookChannel,
)
from skitter.monitors._base import Monitor, MonitorResult, Run, evaluate
from skitter.monitors._builtin import ItemCountChange
from skitter.monitors._config import Plan, plan
from skitter.monitors._history import RunHistory, RunRecord, open_history
from skitter.monitors._report import render_html, report_paths, write_report
from skitter.pipelines import ItemPipelineManager, coverage
from skitter.pipelines.wiring import validator_of
from skitter.settings import AlertSettings, MonitorSettings, Settings
from skitter.signals import spider_closed, spider_opened

__all__ = ["Monitoring", "SpidermonExtension", "problem"]

log = logging.getLogger("skitter.monitors")

_ALERT_ON = {"fail": ("failed",), "warn": ("failed", "warned"), "always": None}


def problem(stats: Any) -> str | None:
    """Why a run's monitors make it a failure, or None."""
    reasons = []
    if stats.get("monitors/status") == "failed":
        reasons.append(f"monitors failed: {stats.get('monitors/summary', '')}")
    if stats.get("alerts/lost"):
        reasons.append(f"{stats.get('alerts/lost')} alert(s) could not be delivered")
    if stats.get("monitors/report_lost"):
        reasons.append("the run report could not be written")
    return "; ".join(reasons) or None


def _status(results: list[MonitorResult]) -> str:
    if any(r.failed and r.level == "fail" for r in results):
        return "failed"
    return "warned" if any(r.failed for r in results) else "passed"


class Monitoring:
    """One crawl's monitors, alerts, history and report (see the module's docstring)."""

    def __init__(
        self,
        crawler: CrawlContext,
        monitors: Plan,
        alerts: Alerts,
        *,
        pipelines: ItemPipelineManager,
        history: RunHistory | None = None,
        report_dir: Path | None = None,
    ) -> None:
        self._crawler = crawler
        self._stats = cast("CrawlStats", crawler.stats)
        self.plan = monitors
        self.alerts = alerts
        self._pipelines = pipelines
        self._history = history
        self._report_dir = report_dir
        self._alert_on = _ALERT_ON[crawler.settings.view(AlertSettings).alert_on]
        self._periodic: list[Background] = []
        self._started = 0.0
        #: The latest report (a periodic run's until the end), for the dashboard.
        self.report: dict[str, Any] | None = None

    @classmethod
    def from_crawler(
        cls, crawler: CrawlContext, pipelines: ItemPipelineManager
    ) -> Monitoring | None:
        """The crawl's monitoring, or None when it has no monitor and no validation."""
        own = crawler.settings.view(AlertSettings)
        if own.alert_on not in _ALERT_ON:
            wrong = own.alert_on
            raise ConfigError(f"ALERT_ON must be fail, warn or always, not {wrong!r}")
        monitors = plan(crawler)
        if not monitors and validator_of(pipelines.pipelines) is None:
            for name, value in (
                ("ALERT_WEBHOOKS", own.alert_webhooks),
                ("ALERT_EMAIL_TO", own.alert_email_to),
            ):
                if value:
                    raise ConfigError(f"{name} alerts on monitor results, and no monitor is set")
            return None
        history = open_history(crawler)
        if history is None and any(isinstance(m, ItemCountChange) for m in monitors.end):
            raise ConfigError(
                "MONITOR_ITEM_COUNT_CHANGE compares with the last run, which is remembered in "
                "the job directory (--job-dir) or MONITOR_HISTORY: set one"
            )
        pipelines.count_coverage()
        alerts = Alerts(
            _channels(crawler.settings),
            stats=crawler.stats,
            clock=crawler.clock,
            retries=own.alert_retries,
            delay=own.alert_retry_delay,
            min_interval=own.alert_min_interval,
        )
        folder = (
            _report_dir(crawler, pipelines)
            if crawler.settings.view(MonitorSettings).monitor_report
            else None
        )
        monitoring = cls(
            crawler, monitors, alerts, pipelines=pipelines, history=history, report_dir=folder
        )
        signals = getattr(crawler, "signals", None)
        if signals is not None:
            signals.connect(monitoring.opened, spider_opened)
            signals.connect(monitoring.closed, spider_closed)
        return monitoring

    @property
    def spider_name(self) -> str:
        spider = self._crawler.spider
        return str(getattr(spider, "name", None) or type(spider).__name__)

    # -- during the crawl ---------------------------------------------------------------
    async def opened(self) -> None:
        self._started = self._crawler.clock.monotonic()
        for interval, monitors in self.plan.periodic:
            every = Background(f"skitter-monitors-{interval:g}s")
            every.start(self._every(interval, monitors))
            self._periodic.append(every)

    async def _every(self, interval: float, monitors: list[Monitor]) -> None:
        """Run ``monitors`` every ``interval`` seconds from the start, on the crawl's
        clock (a late run does not shift the ones after it)."""

        async def run() -> None:
            try:
                await self.check(monitors, final=False)
            except Exception:
                log.exception("Error in a periodic run of the monitors")

        await periodic(interval, run, clock=self._crawler.clock)

    # -- at the end ---------------------------------------------------------------------
    async def closed(self) -> None:
        for every in self._periodic:
            await every.stop()
        self._periodic.clear()
        await self.check(self.plan.end, final=True)

    async def check(self, monitors: list[Monitor], *, final: bool) -> list[MonitorResult]:
        """Run ``monitors`` now; count, alert, report (and at the end, remember)."""
        previous = None
        if final and self._history is not None:
            previous = await self._history.last(self.spider_name)
        stats = self._stats
        run = Run(
            spider=self._crawler.spider,
            stats=stats.to_dict(),
            settings=self._crawler.settings,
            final=final,
            elapsed=self._crawler.clock.monotonic() - self._started,
            previous=previous,
        )
        results = [evaluate(monitor, run) for monitor in monitors]
        status = _status(results)
        self._count(results, status, final)
        for result in results:
            if result.status == "error":
                log.error("Monitor %s could not run: %s", result.name, result.message)
        report = self._report(results, status, final, previous)
        alert_on = self._alert_on or ("failed", "warned")  # "always": also a passing end
        if status in alert_on or (final and self._alert_on is None):
            alert = self._alert(results, status, final, render_html(report))
            await self.alerts.send(alert, final=final)
            report["alerts"] = list(self.alerts.deliveries)
        self.report = report
        self._write(report)
        control = getattr(self._crawler, "control", None)
        if control is not None:
            control.report = self.report
        if final and self._history is not None:
            record = RunRecord.of(self.spider_name, stats.to_dict(), status)
            await self._history.add(record)
        return results

    def _count(self, results: list[MonitorResult], status: str, final: bool) -> None:
        stats = self._crawler.stats
        if not final:
            stats.inc("monitors/periodic_runs")
            if status != "passed":
                stats.inc("monitors/periodic_failures")
            return
        for result in results:
            kind = "warned" if result.failed and result.level == "warn" else result.status
            stats.inc(f"monitors/{'failed' if kind == 'error' else kind}")
        stats.set("monitors/status", status)
        failed = [f"{r.name}: {r.message}" for r in results if r.failed]
        if failed:
            stats.set("monitors/summary", "; ".join(failed))
        log.log(
            logging.ERROR if status == "failed" else logging.INFO,
            "Monitors %s: %d passed, %d failed%s",
            status,
            sum(r.status == "passed" for r in results),
            len(failed),
            f" ({'; '.join(failed)})" if failed else "",
        )

    def _alert(self, results: list[MonitorResult], status: str, final: bool, page: str) -> Alert:
        stats = self._crawler.stats
        when = "" if final else " (during the crawl)"
        lines = [
            f"{'FAIL' if r.level == 'fail' else 'WARN'} {r.name}: {r.message}"
            for r in results
            if r.failed
        ] or ["all monitors passed"]
        lines.append(
            f"finish reason: {stats.get('finish_reason')}, items: "
            f"{stats.get('item_scraped_count', 0)}"
        )
        if self._report_dir is not None:
            lines.append(f"report: {report_paths(self._report_dir, self.spider_name)[1]}")
        summary = {
            "spider": self.spider_name,
            "status": status,
            "final": final,
            "monitors": [r.to_dict() for r in results],
        }
        return Alert(
            subject=f"[skitter] {self.spider_name}: monitors {status}{when}",
            text=mask_text("\n".join(lines)),  # a project's monitor may quote a URL
            status=status,
            summary=summary,
            html=page,
        )

    def _report(
        self,
        results: list[MonitorResult],
        status: str,
        final: bool,
        previous: RunRecord | None,
    ) -> dict[str, Any]:
        stats = self._stats.to_dict()
        validation: dict[str, Any] = {}
        validator = validator_of(self._pipelines.pipelines)
        if validator is not None:
            validation = {k: v for k, v in stats.items() if k.startswith("validation/")}
            validation["samples"] = list(validator.samples)
        return {
            "spider": self.spider_name,
            "final": final,
            "status": status,
            "finish_reason": stats.get("finish_reason"),
            "items": stats.get("item_scraped_count", 0),
            "monitors": [r.to_dict() for r in results],
            "coverage": coverage(stats),
            "validation": validation,
            "previous": asdict(previous) if previous is not None else None,
            "alerts": list(self.alerts.deliveries),
            "stats": stats,
        }

    def _write(self, report: dict[str, Any]) -> None:
        if self._report_dir is None or not report["final"]:
            return
        try:
            paths = write_report(report, self._report_dir, self.spider_name)
        except OSError as exc:
            self._crawler.stats.inc("monitors/report_lost")
            log.error("The run report could not be written to %s: %s", self._report_dir, exc)
            return
        log.info("Run report: %s", paths[1])


class SpidermonExtension:
    """Spidermon's extension (its path in EXTENSIONS): what it does, running the monitors
    of SPIDERMON_SPIDER_CLOSE_MONITORS and SPIDERMON_PERIODIC_MONITORS when
    SPIDERMON_ENABLED, skitter does itself (``Monitoring``), so it is left out."""

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> SpidermonExtension:
        raise NotConfigured("skitter runs Spidermon's built-in monitors itself")


def _channels(settings: Settings) -> list[Channel]:
    own = settings.view(AlertSettings)
    timeout = own.alert_timeout
    channels: list[Channel] = [LogChannel()] if own.alert_log else []
    for hook in own.alert_webhooks or ():
        url, fmt = (hook.get("url"), hook.get("format")) if isinstance(hook, dict) else (hook, None)
        if not isinstance(url, str):
            raise ConfigError("ALERT_WEBHOOKS: each entry is a URL or {'url': ..., 'format': ...}")
        channels.append(WebhookChannel(url, fmt, timeout=timeout))
    if own.alert_email_to:
        channels.append(EmailChannel(own.alert_email_to, settings, timeout=timeout))
    return channels


def _report_dir(crawler: CrawlContext, pipelines: ItemPipelineManager) -> Path:
    """MONITOR_REPORT_DIR, else beside the first local feed, else the job directory,
    else the current folder."""
    chosen = crawler.settings.view(MonitorSettings).monitor_report_dir
    if chosen:
        return Path(chosen)
    for feed in pipelines.feeds:
        with contextlib.suppress(AttributeError):
            if feed.options.path is not None:
                return feed.options.path.parent
    job = getattr(crawler, "job", None)
    return Path(job.path) if job is not None else Path.cwd()
