"""Judging a run: monitors, alerts, run history and the run report.

A crawl can end "finished" and still be useless: the site changed its markup and every
price is empty, the item count fell by 90 %, half the pages were 403. Monitors check
the run at the end (and, for bounds that only grow, every MONITOR_INTERVAL seconds),
alerts tell someone (a log line, a webhook, an e-mail), the run report shows what
happened, and a run whose monitors fail exits non-zero. Item validation itself, which
feeds the monitors its counts, is a pipeline (``skitter.pipelines``).

A project's own monitor is a function of the run, or a class with ``check(run)``::

    def prices_are_positive(run):
        assert run.stats.get("price_zero_count", 0) == 0, "some prices are 0"

    MONITORS = {"myproject.monitors.prices_are_positive": "fail"}
"""

from skitter.monitors._alerts import Alert, Alerts, EmailChannel, LogChannel, WebhookChannel
from skitter.monitors._base import Monitor, MonitorFailed, MonitorResult, Run
from skitter.monitors._history import FileRunHistory, RunHistory, RunRecord
from skitter.monitors._monitoring import Monitoring, SpidermonExtension, problem
from skitter.monitors._report import render_html

__all__ = [
    "Alert",
    "Alerts",
    "EmailChannel",
    "FileRunHistory",
    "LogChannel",
    "Monitor",
    "MonitorFailed",
    "MonitorResult",
    "Monitoring",
    "Run",
    "RunHistory",
    "RunRecord",
    "SpidermonExtension",
    "WebhookChannel",
    "problem",
    "render_html",
]
