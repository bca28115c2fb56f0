"""A project that used Spidermon: its built-in suite and monitors run with Spidermon's
settings and meanings, its components' paths load without Spidermon installed, and
what does not map (its actions, expression monitors, Scrapy Cloud's features, a
project's own suites) is refused by name with what to use instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skitter import ConfigError, Crawler, Spider
from skitter.exceptions import MonitorsFailed
from skitter.monitors._config import plan

SUITE = "spidermon.contrib.scrapy.monitors.SpiderCloseMonitorSuite"
#: What Spidermon's suite needs configured (it fails a monitor as not configured else).
SUITE_SETTINGS = {
    "SPIDERMON_ENABLED": True,
    "SPIDERMON_SPIDER_CLOSE_MONITORS": [SUITE],
    "SPIDERMON_MIN_ITEMS": 2,
    "SPIDERMON_MAX_ERRORS": 0,
    "SPIDERMON_MAX_WARNINGS": 5,
    "SPIDERMON_MAX_DOWNLOADER_EXCEPTIONS": 0,
    "SPIDERMON_MAX_ITEM_VALIDATION_ERRORS": 0,
    "SPIDERMON_ADD_FIELD_COVERAGE": True,
    "SPIDERMON_FIELD_COVERAGE_RULES": {"dict/price": 1.0},
    "EXTENSIONS": {"spidermon.contrib.scrapy.extensions.Spidermon": 500},
}


class Ported(Spider):
    name = "ported"

    async def start(self) -> Any:
        yield {"name": "a", "price": 1}
        yield {"name": "b", "price": None}


async def test_spidermons_suite_runs_its_monitors_with_its_settings(tmp_path: Path) -> None:
    crawler = Crawler(Ported, {**SUITE_SETTINGS, "MONITOR_REPORT_DIR": str(tmp_path)})
    with pytest.raises(MonitorsFailed, match=r"FieldCoverageMonitor: dict/price filled in 50.0 %"):
        await crawler.run()
    report = crawler.control.report
    assert report is not None
    assert [(m["name"], m["status"]) for m in report["monitors"]] == [
        ("ItemCountMonitor", "passed"),
        ("ItemValidationMonitor", "passed"),
        ("ErrorCountMonitor", "passed"),
        ("WarningCountMonitor", "passed"),
        ("FinishReasonMonitor", "passed"),
        ("UnwantedHTTPCodesMonitor", "passed"),
        ("FieldCoverageMonitor", "failed"),
        ("DownloaderExceptionMonitor", "passed"),
        ("SuccessfulRequestsMonitor", "passed"),
    ]  # RetryCountMonitor and TotalRequestsMonitor are off at Spidermon's -1


def test_a_monitor_spidermon_would_call_not_configured_is_refused_at_start() -> None:
    settings = {**SUITE_SETTINGS, "SPIDERMON_MIN_ITEMS": None}
    with pytest.raises(ConfigError, match="ItemCountMonitor needs SPIDERMON_MIN_ITEMS"):
        Crawler(Ported, settings).build()
    settings = {**SUITE_SETTINGS, "SPIDERMON_ADD_FIELD_COVERAGE": False}
    with pytest.raises(ConfigError, match="needs SPIDERMON_ADD_FIELD_COVERAGE = True"):
        Crawler(Ported, settings).build()


def test_single_monitors_and_periodic_ones_map_by_any_of_spidermons_paths() -> None:
    crawler = Crawler(
        Ported,
        {
            "SPIDERMON_ENABLED": True,
            "SPIDERMON_SPIDER_CLOSE_MONITORS": [
                "spidermon.contrib.scrapy.monitors.monitors.FinishReasonMonitor",
                "spidermon.contrib.scrapy.monitors.RetryCountMonitor",
            ],
            "SPIDERMON_MAX_RETRIES": 3,
            "SPIDERMON_PERIODIC_MONITORS": {
                "spidermon.contrib.scrapy.monitors.PeriodicExecutionTimeMonitor": 60,
            },
            "SPIDERMON_MAX_EXECUTION_TIME": 3600,
        },
    )
    monitors = plan(crawler)
    assert [m.name for m in monitors.end] == ["FinishReasonMonitor", "RetryCountMonitor"]
    [(interval, periodic)] = monitors.periodic
    assert interval == 60.0 and [m.name for m in periodic] == ["PeriodicExecutionTimeMonitor"]


def test_without_spidermon_enabled_its_monitors_do_not_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = {**SUITE_SETTINGS, "SPIDERMON_ENABLED": False}
    assert not plan(Crawler(Ported, settings))
    assert "SPIDERMON_ENABLED is not" in caplog.text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("myproject.monitors.SpiderCloseMonitorSuite", "write each check as a function or class"),
        (
            "spidermon.contrib.scrapy.monitors.ZyteJobsComparisonMonitor",
            "MONITOR_ITEM_COUNT_CHANGE",
        ),
    ],
)
def test_a_suite_skitter_does_not_run_is_refused(path: str, message: str) -> None:
    settings = {"SPIDERMON_ENABLED": True, "SPIDERMON_SPIDER_CLOSE_MONITORS": [path]}
    with pytest.raises(ConfigError, match=message):
        Crawler(Ported, settings).build()


@pytest.mark.parametrize(
    ("setting", "value", "hint"),
    [
        ("SPIDERMON_SLACK_SENDER_TOKEN", "xoxb-SECRET", "ALERT_WEBHOOKS"),
        ("SPIDERMON_DISCORD_WEBHOOK_URL", "https://discord.com/api/webhooks/SECRET", "WEBHOOKS"),
        ("SPIDERMON_EMAIL_TO", ["ops@example.com"], "ALERT_EMAIL_TO"),
        ("SPIDERMON_SMTP_PASSWORD", "SECRET", "MAIL_PASS"),
        ("SPIDERMON_SENTRY_DSN", "https://key:SECRET@sentry.example.com/1", "Sentry"),
        ("SPIDERMON_SPIDER_OPEN_MONITORS", ["a.Suite"], "at the end of the crawl"),
        ("SPIDERMON_SPIDER_CLOSE_EXPRESSION_MONITORS", [{"name": "x"}], "a function in MONITORS"),
        ("SPIDERMON_VALIDATION_MODELS", ["a.Model"], "pydantic model"),
        ("SPIDERMON_VALIDATION_ADD_ERRORS_TO_ITEMS", True, "VALIDATION_INVALID = 'feed'"),
        ("SPIDERMON_JOBS_COMPARISON", 3, "MONITOR_ITEM_COUNT_CHANGE"),
        ("SPIDERMON_FIELD_COVERAGE_SKIP_NONE", False, "filled"),
        ("SPIDERMON_REPORT_TEMPLATE", "r.jinja", "MONITOR_REPORT"),
    ],
)
def test_a_spidermon_setting_that_does_not_map_is_refused_by_name(
    setting: str, value: Any, hint: str
) -> None:
    class Custom(Ported):
        custom_settings = {setting: value}

    with pytest.raises(ConfigError) as raised:
        Crawler(Custom)
    message = str(raised.value)
    assert f"setting {setting}" in message and "is Spidermon's" in message
    assert hint in message and "SECRET" not in message


def test_values_that_ask_for_what_skitter_does_are_accepted() -> None:
    class Custom(Ported):
        custom_settings = {
            "SPIDERMON_SPIDER_OPEN_MONITORS": [],
            "SPIDERMON_VALIDATION_ADD_ERRORS_TO_ITEMS": False,
            "SPIDERMON_FIELD_COVERAGE_SKIP_NONE": True,
        }

    Crawler(Custom).build()


def test_an_installed_spidermon_runs_its_own_extension_and_skitter_steps_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Spidermon installed, its extension runs a project's own suites (which
    skitter's stand-in refuses), and skitter adds no monitors of its own for them."""
    import sys

    from skitter import _components

    package = tmp_path / "spidermon" / "contrib" / "scrapy"
    package.mkdir(parents=True)
    for folder in (package, package.parent, package.parent.parent):
        (folder / "__init__.py").write_text("")
    (package / "extensions.py").write_text(
        "BUILT = []\n\n\nclass Spidermon:\n"
        "    @classmethod\n"
        "    def from_crawler(cls, crawler):\n"
        "        BUILT.append(crawler.settings.getlist('SPIDERMON_SPIDER_CLOSE_MONITORS'))\n"
        "        return cls()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n.partition(".")[0] == "spidermon"]:
        monkeypatch.delitem(sys.modules, name)
    _components.spidermon_installed.cache_clear()
    try:
        own_suite = {"SPIDERMON_SPIDER_CLOSE_MONITORS": ["myproject.monitors.Suite"]}
        crawler = Crawler(Ported, {**SUITE_SETTINGS, **own_suite})
        crawler.build()
        assert plan(crawler).end == []  # none of skitter's: the suite is Spidermon's
        from spidermon.contrib.scrapy.extensions import BUILT  # type: ignore[import-not-found]

        assert BUILT == [["myproject.monitors.Suite"]]
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "spidermon"]:
            del sys.modules[name]  # the fake package: the next test has no Spidermon
        _components.spidermon_installed.cache_clear()
