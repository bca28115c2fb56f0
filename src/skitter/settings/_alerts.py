"""Alerts on monitor results (webhooks, e-mail through Scrapy's MAIL_* server, the log),
and OpenTelemetry traces."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "ALERT_ON",
        "warn",
        str,
        "When alerts go out: 'fail' (a failing monitor), 'warn' (a warning too) or "
        "'always' (every run's result).",
    ),
    Setting(
        "ALERT_LOG",
        True,
        bool,
        "Alert in the log: one line per alert (ERROR when a monitor failed, else WARNING).",
    ),
    Setting(
        "ALERT_WEBHOOKS",
        [],
        list,
        "Webhook URLs (Slack and Discord incoming webhooks, or any JSON receiver), or "
        "{'url': ..., 'format': 'slack'|'discord'|'json'} dicts; shown masked.",
    ),
    Setting(
        "ALERT_EMAIL_TO",
        [],
        list,
        "E-mail alert recipients, sent through MAIL_HOST (Scrapy's MAIL_* settings).",
    ),
    Setting(
        "ALERT_RETRIES",
        3,
        int,
        "Times an alert that could not be delivered is sent again (then the run's report "
        "and log say it was lost).",
    ),
    Setting(
        "ALERT_RETRY_DELAY",
        2.0,
        float,
        "Seconds before an alert is sent again, doubled each time.",
    ),
    Setting("ALERT_TIMEOUT", 10.0, float, "Seconds one attempt to deliver an alert may take."),
    Setting(
        "ALERT_MIN_INTERVAL",
        600.0,
        float,
        "Seconds between two alerts of one channel during a crawl (MONITOR_INTERVAL); "
        "the alert at the end of the crawl always goes.",
    ),
    Setting("MAIL_HOST", "localhost", str, "The SMTP server e-mail alerts go through."),
    Setting("MAIL_PORT", 25, int, "The SMTP server's port."),
    Setting("MAIL_FROM", "skitter@localhost", str, "The sender of e-mail alerts."),
    Setting("MAIL_USER", None, str, "The SMTP user name; None = no login."),
    Setting("MAIL_PASS", None, str, "The SMTP password (shown masked)."),
    Setting("MAIL_TLS", False, bool, "Upgrade the SMTP connection with STARTTLS."),
    Setting("MAIL_SSL", False, bool, "Connect to the SMTP server over TLS (SMTPS)."),
    Setting(
        "TRACING_ENABLED",
        False,
        bool,
        "OpenTelemetry spans per request and per callback (skitter[otel]).",
    ),
    Setting(
        "TRACING_EXPORTER",
        "otlp",
        object,
        "Where spans go: 'otlp' (a collector, over HTTP), 'console', or a SpanExporter "
        "(object or path).",
    ),
    Setting(
        "TRACING_OTLP_ENDPOINT",
        None,
        str,
        "The collector's traces URL; None = OpenTelemetry's default "
        "(OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318/v1/traces).",
    ),
    Setting("TRACING_SERVICE_NAME", None, str, "The service.name of the spans; None = BOT_NAME."),
]
