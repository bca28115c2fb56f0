"""Spidermon's settings: those that map onto skitter's monitors, and those refused.

A Scrapy project that used Spidermon brings ``SPIDERMON_*`` settings. Where one means
something skitter does (Spidermon's built-in monitors and their thresholds, JSON Schema
validation, field coverage), it is accepted here with Spidermon's default and read by
``skitter.monitors`` with Spidermon's meaning. The rest (its actions, which belong to
monitor suites skitter does not run, expression monitors, Scrapy Cloud's job comparison
and tags...) are refused at start by name, with what to use instead, in the style of
Scrapy's (``_scrapy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skitter.settings._scrapy import Unsupported
from skitter.settings._setting import Setting

__all__ = ["GROUP", "REFUSED", "UNWANTED_HTTP_CODES"]

#: Spidermon's default SPIDERMON_UNWANTED_HTTP_CODES.
UNWANTED_HTTP_CODES = [400, 407, 429, 500, 502, 503, 504, 523, 540, 541]

_MONITOR = "Spidermon's {} (SPIDERMON_SPIDER_CLOSE_MONITORS)"

GROUP: list[Setting] = [
    Setting(
        "SPIDERMON_ENABLED",
        False,
        bool,
        "Run the monitors of SPIDERMON_SPIDER_CLOSE_MONITORS and SPIDERMON_PERIODIC_MONITORS "
        "(Spidermon's built-ins only; see Monitors and alerts).",
    ),
    Setting(
        "SPIDERMON_SPIDER_CLOSE_MONITORS",
        [],
        list,
        "Spidermon's built-in suite or monitors by path, run at the end of the crawl.",
    ),
    Setting(
        "SPIDERMON_PERIODIC_MONITORS",
        {},
        dict,
        "{Spidermon built-in monitor or suite path: seconds}, run during the crawl.",
    ),
    Setting(
        "SPIDERMON_VALIDATION_SCHEMAS",
        None,
        object,
        "JSON Schema files, a list (every item) or {item class: file(s)}, for Spidermon's "
        "ItemValidationPipeline in ITEM_PIPELINES.",
    ),
    Setting(
        "SPIDERMON_VALIDATION_DROP_ITEMS_WITH_ERRORS",
        False,
        bool,
        "Spidermon's validation drops invalid items (else keeps them, counted).",
    ),
    Setting(
        "SPIDERMON_ADD_FIELD_COVERAGE", False, bool, "Spidermon's FieldCoverageMonitor may run."
    ),
    Setting(
        "SPIDERMON_FIELD_COVERAGE_RULES",
        {},
        dict,
        "{'ItemClass/field': fraction} for Spidermon's FieldCoverageMonitor ('dict/...' "
        "for dict items).",
    ),
    Setting(
        "SPIDERMON_FIELD_COVERAGE_SKIP_IF_NO_ITEM",
        False,
        bool,
        "Spidermon's FieldCoverageMonitor passes a run without items.",
    ),
    Setting("SPIDERMON_MIN_ITEMS", None, int, _MONITOR.format("ItemCountMonitor") + "."),
    Setting(
        "SPIDERMON_MAX_ERRORS",
        None,
        int,
        _MONITOR.format("ErrorCountMonitor") + ": log_count/ERROR.",
    ),
    Setting(
        "SPIDERMON_MAX_WARNINGS",
        None,
        int,
        _MONITOR.format("WarningCountMonitor") + ": log_count/WARNING.",
    ),
    Setting(
        "SPIDERMON_MAX_CRITICALS",
        None,
        int,
        _MONITOR.format("CriticalCountMonitor") + ": log_count/CRITICAL.",
    ),
    Setting(
        "SPIDERMON_EXPECTED_FINISH_REASONS",
        ["finished"],
        list,
        _MONITOR.format("FinishReasonMonitor") + ".",
    ),
    Setting(
        "SPIDERMON_UNWANTED_HTTP_CODES",
        UNWANTED_HTTP_CODES,
        object,
        _MONITOR.format("UnwantedHTTPCodesMonitor") + ": codes, or {code: max count or "
        "{'max_count': n, 'max_percentage': f}}.",
    ),
    Setting(
        "SPIDERMON_UNWANTED_HTTP_CODES_MAX_COUNT",
        10,
        int,
        "The most responses of each unwanted code (a list of codes).",
    ),
    Setting(
        "SPIDERMON_MAX_RETRIES",
        -1,
        int,
        _MONITOR.format("RetryCountMonitor") + ": retry/max_reached; -1 = off.",
    ),
    Setting(
        "SPIDERMON_MAX_DOWNLOADER_EXCEPTIONS",
        None,
        int,
        _MONITOR.format("DownloaderExceptionMonitor") + ".",
    ),
    Setting(
        "SPIDERMON_MIN_SUCCESSFUL_REQUESTS",
        0,
        int,
        _MONITOR.format("SuccessfulRequestsMonitor") + ": responses with status 200.",
    ),
    Setting(
        "SPIDERMON_MAX_REQUESTS_ALLOWED",
        -1,
        int,
        _MONITOR.format("TotalRequestsMonitor") + "; -1 = off.",
    ),
    Setting(
        "SPIDERMON_MAX_ITEM_VALIDATION_ERRORS",
        None,
        int,
        _MONITOR.format("ItemValidationMonitor") + ": validation errors.",
    ),
    Setting(
        "SPIDERMON_MAX_EXECUTION_TIME",
        None,
        int,
        "Spidermon's PeriodicExecutionTimeMonitor: seconds the crawl may run.",
    ),
    Setting(
        "SPIDERMON_ITEM_COUNT_INCREASE",
        None,
        int,
        "Spidermon's PeriodicItemCountMonitor: items each period must add.",
    ),
]


def _group(names: str, hint: str, *accepts: Any) -> dict[str, Unsupported]:
    return {name: Unsupported(hint, accepts, owner="Spidermon") for name in names.split()}


def _prefixed(prefix: str, names: str) -> str:
    return " ".join(f"SPIDERMON_{prefix}{name}" for name in names.split())


_SUITES = "monitors run at the end of the crawl (SPIDERMON_SPIDER_CLOSE_MONITORS, MONITORS)"
_ACTIONS = "Spidermon's actions belong to monitor suites, which skitter does not run; "
_MAIL = (
    _ACTIONS + "ALERT_EMAIL_TO sends alerts through MAIL_HOST (MAIL_PORT, MAIL_USER, "
    "MAIL_PASS, MAIL_TLS, MAIL_SSL, MAIL_FROM)"
)
_HOOKS = _ACTIONS + "ALERT_WEBHOOKS takes Slack and Discord incoming-webhook URLs"

REFUSED: Mapping[str, Unsupported] = {
    **_group(
        "SPIDERMON_SPIDER_OPEN_MONITORS SPIDERMON_ENGINE_STOP_MONITORS",
        _SUITES + " and every MONITOR_INTERVAL seconds (SPIDERMON_PERIODIC_MONITORS)",
        [],
    ),
    **_group(
        "SPIDERMON_SPIDER_OPEN_EXPRESSION_MONITORS SPIDERMON_SPIDER_CLOSE_EXPRESSION_MONITORS "
        "SPIDERMON_ENGINE_STOP_EXPRESSION_MONITORS SPIDERMON_EXPRESSIONS_MONITOR_CLASS",
        "expression monitors are not supported; write the expression as a function in "
        "MONITORS (it gets the run: run.stats, run.spider...)",
        [],
    ),
    **_group(
        "SPIDERMON_MONITOR_SKIPPING_RULES",
        "skipping rules are not supported; a monitor function in MONITORS passes by returning None",
        {},
    ),
    **_group(
        "SPIDERMON_VALIDATION_MODELS",
        "schematics models are not supported; give a JSON Schema or a pydantic model in "
        "VALIDATION_SCHEMAS",
        [],
    ),
    **_group(
        "SPIDERMON_VALIDATION_ADD_ERRORS_TO_ITEMS",
        "errors are not added to items; VALIDATION_INVALID = 'feed' writes invalid items to "
        "a feed of their own, and the run report lists their errors",
        False,
    ),
    **_group(
        "SPIDERMON_VALIDATION_ERRORS_FIELD",
        "errors are not added to items (see SPIDERMON_VALIDATION_ADD_ERRORS_TO_ITEMS)",
        "_validation",
    ),
    **_group(
        "SPIDERMON_FIELD_COVERAGE_SKIP_NONE",
        "skitter counts a field as covered only when it is filled (not None, not empty), "
        "which is Spidermon's SPIDERMON_FIELD_COVERAGE_SKIP_NONE = True",
        True,
    ),
    **_group(
        "SPIDERMON_DICT_FIELDS_COVERAGE_LEVELS",
        "coverage is counted at every level of nested dicts (Spidermon's -1)",
        -1,
    ),
    **_group(
        "SPIDERMON_LIST_FIELDS_COVERAGE_LEVELS",
        "coverage inside lists is not counted",
        0,
    ),
    **_group(
        "SPIDERMON_JOBS_COMPARISON "
        + _prefixed(
            "JOBS_COMPARISON_", "ARGUMENTS ARGUMENTS_ENABLED CLOSE_REASONS STATES TAGS THRESHOLD"
        ),
        "Scrapy Cloud's job comparison is not supported; MONITOR_ITEM_COUNT_CHANGE compares "
        "with the last run remembered in MONITOR_HISTORY",
        None,
        0,
    ),
    **_group(
        "SPIDERMON_JOB_TAGS_TO_ADD SPIDERMON_JOB_TAGS_TO_REMOVE SPIDERMON_MAX_STORED_STATS",
        "Scrapy Cloud's job tags and stored stats are not supported; runs are remembered in "
        "MONITOR_HISTORY",
        [],
    ),
    **_group(
        _prefixed(
            "SLACK_",
            "ATTACHMENTS ATTACHMENTS_TEMPLATE FAKE INCLUDE_ATTACHMENTS INCLUDE_MESSAGE MESSAGE "
            "MESSAGE_TEMPLATE NOTIFIER_INCLUDE_ERROR_ATTACHMENTS NOTIFIER_INCLUDE_OK_ATTACHMENTS "
            "NOTIFIER_INCLUDE_REPORT_LINK NOTIFIER_REPORT_INDEX RECIPIENTS SENDER_NAME "
            "SENDER_TOKEN",
        ),
        _HOOKS,
    ),
    **_group(
        _prefixed(
            "DISCORD_",
            "FAKE MESSAGE MESSAGE_TEMPLATE NOTIFIER_INCLUDE_ERROR_MESSAGES "
            "NOTIFIER_INCLUDE_OK_MESSAGES WEBHOOK_URL",
        ),
        _HOOKS,
    ),
    **_group(
        _prefixed(
            "TELEGRAM_",
            "FAKE MESSAGE MESSAGE_TEMPLATE NOTIFIER_INCLUDE_ERROR_MESSAGES "
            "NOTIFIER_INCLUDE_OK_MESSAGES RECIPIENTS SENDER_TOKEN",
        ),
        _ACTIONS + "Telegram is not supported; ALERT_WEBHOOKS posts JSON to any webhook",
    ),
    **_group(
        _prefixed("EMAIL_", "BCC CC CONTEXT FAKE REPLY_TO SENDER SUBJECT SUBJECT_TEMPLATE TO")
        + " "
        + _prefixed("SMTP_", "ENFORCE_SSL ENFORCE_TLS HOST PASSWORD PORT USER")
        + " "
        + _prefixed(
            "",
            "AWS_ACCESS_KEY AWS_ACCESS_KEY_ID AWS_REGION_NAME AWS_RETURN_PATH "
            "AWS_SECRET_ACCESS_KEY AWS_SECRET_KEY BODY_HTML BODY_HTML_TEMPLATE BODY_TEXT "
            "BODY_TEXT_TEMPLATE",
        ),
        _MAIL,
    ),
    **_group(
        _prefixed("SENTRY_", "DSN ENVIRONMENT_TYPE FAKE LOG_LEVEL PROJECT_NAME")
        + " SPIDERMON_SNS_TOPIC_ARN",
        _ACTIONS + "Sentry and SNS are not supported; ALERT_WEBHOOKS posts JSON to any webhook",
    ),
    **_group(
        _prefixed(
            "REPORT_",
            "CONTEXT FILENAME S3_BUCKET S3_CONTENT_TYPE S3_FILENAME S3_MAKE_PUBLIC "
            "S3_REGION_ENDPOINT TEMPLATE",
        ),
        _ACTIONS + "skitter writes its own run report, JSON and HTML (MONITOR_REPORT, "
        "MONITOR_REPORT_DIR)",
    ),
}
