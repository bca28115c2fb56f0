"""Typed views of what watches a crawl: monitors, alerts (and the mail they go
through), Spidermon's settings.

Field types follow the declarations (``_monitors``, ``_alerts``, ``_spidermon``); a test
keeps the two in step. A setting declared as ``object`` (a path, a class or a value
of several shapes) is ``Any`` here: the component that reads it checks its shape and
names the setting in its refusal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from skitter.settings._views import View

__all__ = [
    "AlertSettings",
    "LogSettings",
    "MonitorSettings",
    "ProjectSettings",
    "SpidermonSettings",
]


@dataclasses.dataclass(frozen=True, slots=True)
class MonitorSettings(View):
    """The built-in monitors, the project's ``MONITORS``, reports and run history."""

    monitors: Any  # {monitor: level}, or a list of monitors
    monitor_levels: Mapping[str, Any]
    monitor_min_items: int | None
    monitor_item_count_change: float | None
    monitor_field_coverage: Mapping[str, Any]
    monitor_max_error_rate: float | None
    monitor_finish_reasons: tuple[Any, ...] | None
    monitor_max_retries: int | None
    monitor_max_bans: int | None
    monitor_interval: float
    monitor_report: bool
    monitor_report_dir: str | None
    monitor_history: Any  # a folder, a RunHistory or its path
    block_statuses: tuple[int, ...]  # what ``max_bans`` counts as a ban


@dataclasses.dataclass(frozen=True, slots=True)
class AlertSettings(View):
    """When and where monitor results are sent, and the SMTP server e-mail goes through."""

    alert_on: str
    alert_retries: int
    alert_retry_delay: float
    alert_min_interval: float
    alert_timeout: float
    alert_log: bool
    alert_webhooks: tuple[Any, ...]  # URLs, or {"url": ..., "format": ...}
    alert_email_to: tuple[Any, ...]
    mail_host: str
    mail_port: int
    mail_from: str
    mail_user: str | None
    mail_pass: str | None
    mail_tls: bool
    mail_ssl: bool


@dataclasses.dataclass(frozen=True, slots=True)
class SpidermonSettings(View):
    """Spidermon's settings, with Spidermon's meaning (its monitors and validation)."""

    spidermon_enabled: bool
    extensions: Mapping[Any, int | None]  # Spidermon's own extension listed: it runs itself
    spidermon_spider_close_monitors: tuple[Any, ...]
    spidermon_periodic_monitors: Mapping[str, Any]
    spidermon_validation_schemas: Any  # a list of files, or {item class: file(s)}
    spidermon_validation_drop_items_with_errors: bool
    spidermon_add_field_coverage: bool
    spidermon_field_coverage_rules: Mapping[str, Any]
    spidermon_field_coverage_skip_if_no_item: bool
    spidermon_min_items: int | None
    spidermon_max_errors: int | None
    spidermon_max_warnings: int | None
    spidermon_max_criticals: int | None
    spidermon_expected_finish_reasons: tuple[Any, ...]
    spidermon_unwanted_http_codes: Any  # codes, or {code: most}
    spidermon_unwanted_http_codes_max_count: int
    spidermon_max_retries: int
    spidermon_max_downloader_exceptions: int | None
    spidermon_min_successful_requests: int
    spidermon_max_requests_allowed: int
    spidermon_max_item_validation_errors: int | None
    spidermon_max_execution_time: int | None
    spidermon_item_count_increase: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class ProjectSettings(View):
    """What the command line reads of a project: where its spiders, commands, templates
    and contracts are."""

    bot_name: str
    spider_modules: tuple[str, ...]
    newspider_module: str
    spider_loader_warn_only: bool
    commands_module: str
    templates_dir: str | None
    spider_contracts: Mapping[Any, int | None]
    spider_contracts_base: Mapping[Any, int | None]


@dataclasses.dataclass(frozen=True, slots=True)
class LogSettings(View):
    """Where and how the log is written (Scrapy's LOG_* settings)."""

    log_enabled: bool
    log_level: str
    log_file: str | None
    log_file_append: bool
    log_encoding: str
    log_format: str
    log_dateformat: str
    log_stdout: bool
    log_short_names: bool
