"""Alerts against real receivers on 127.0.0.1: retries with back-off (on virtual time),
a refusal that cannot change is not retried and makes the run fail, the rate limit on
the crawl's clock, Slack's and Discord's JSON, e-mail through an SMTP server, and a
webhook's secret path never shown."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import pytest

from skitter import Crawler, Spider
from skitter.exceptions import MonitorsFailed
from skitter.monitors import Alert, Alerts, EmailChannel, WebhookChannel
from skitter.settings import Settings
from skitter.testing import DictStats, FakeClock

from .conftest import Mailbox, Receiver

ALERT = Alert("[skitter] shop: monitors failed", "FAIL min_items: 3 items", "failed", {"n": 1})


def alerts(*channels: Any, clock: Any = None, **kw: Any) -> tuple[Alerts, DictStats]:
    stats = DictStats()
    return Alerts(channels, stats=stats, clock=clock or FakeClock(), **kw), stats


@pytest.mark.virtual_time
async def test_a_webhook_is_retried_with_back_off(receiver: Receiver) -> None:
    receiver.fail["slack"] = [500, 503]
    sender, stats = alerts(WebhookChannel(receiver.url("slack")), retries=3, delay=2.0)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await sender.send(ALERT, final=True)
    assert round(loop.time() - start, 6) == 6.0  # waited 2 s, then 4 s
    assert len(receiver.posts["slack"]) == 3
    assert dict(stats) == {"alerts/webhook/sent": 1}
    assert sender.deliveries[0]["delivered"] is True


async def test_a_refusal_is_not_retried_and_the_secret_path_is_masked(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.fail["T0-SECRET"] = [404]
    url = receiver.url("T0-SECRET")
    sender, stats = alerts(WebhookChannel(url), retries=3, delay=0.0)
    await sender.send(ALERT, final=True)
    assert len(receiver.posts["T0-SECRET"]) == 1
    assert dict(stats) == {"alerts/webhook/lost": 1, "alerts/lost": 1}
    [delivery] = sender.deliveries
    assert delivery["error"] == "HTTP 404" and "SECRET" not in delivery["target"]
    assert "could not be delivered: HTTP 404" in caplog.text
    assert "SECRET" not in caplog.text


async def test_an_unreachable_webhook_is_lost_after_its_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/services/T0/B0/SECRET"
    sender, stats = alerts(WebhookChannel(url), retries=2, delay=0.0)
    with caplog.at_level(logging.WARNING):
        await sender.send(ALERT, final=True)
    assert stats["alerts/lost"] == 1
    assert caplog.text.count("failed (try") == 3
    assert "SECRET" not in caplog.text and "SECRET" not in str(sender.deliveries)


async def test_alerts_during_the_crawl_are_rate_limited_on_its_clock(receiver: Receiver) -> None:
    clock = FakeClock()
    sender, stats = alerts(WebhookChannel(receiver.url("h")), clock=clock, min_interval=600)
    await sender.send(ALERT, final=False)
    clock.advance(599)
    await sender.send(ALERT, final=False)  # held back
    clock.advance(1)
    await sender.send(ALERT, final=False)
    await sender.send(ALERT, final=True)  # the end always goes
    assert len(receiver.posts["h"]) == 3
    assert dict(stats) == {"alerts/webhook/sent": 3, "alerts/webhook/suppressed": 1}


def test_slack_and_discord_get_their_own_json() -> None:
    long = Alert("subject", "x" * 3000, "failed", {"spider": "shop"})
    slack = WebhookChannel("https://hooks.slack.com/services/T/B/S")
    discord = WebhookChannel("https://discord.com/api/webhooks/1/abc")
    other = WebhookChannel("https://alerts.example.com/in")
    assert slack.payload(long) == {"text": "subject\n" + "x" * 3000}
    assert discord.payload(long) == {"content": ("subject\n" + "x" * 3000)[:2000]}
    body = other.payload(long)
    assert set(body) == {"text", "content", "run"} and body["run"] == {"spider": "shop"}
    assert WebhookChannel("https://x.example/h", "slack").format == "slack"
    assert slack.label == "https://hooks.slack.com/***"


async def test_an_email_reaches_the_smtp_server(mailbox: Mailbox) -> None:
    settings = {
        "MAIL_HOST": "127.0.0.1",
        "MAIL_PORT": mailbox.port,
        "MAIL_FROM": "bot@example.com",
        "MAIL_USER": None,
        "MAIL_PASS": None,
        "MAIL_TLS": False,
        "MAIL_SSL": False,
    }
    channel = EmailChannel(["a@example.com", "b@example.com"], Settings(settings))
    sender, stats = alerts(channel)
    page = Alert(ALERT.subject, ALERT.text, "failed", html="<html><p>report</p></html>")
    await sender.send(page, final=True)
    [mail] = mailbox.messages
    assert mail["Subject"] == ALERT.subject and mail["To"] == "a@example.com, b@example.com"
    assert mailbox.envelopes[0].rcpt_tos == ["a@example.com", "b@example.com"]
    assert "<p>report</p>" in mail.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert dict(stats) == {"alerts/email/sent": 1}


class Quiet(Spider):
    name = "quiet"

    async def start(self) -> Any:
        yield {"n": 1}


async def test_an_alert_that_could_not_be_delivered_fails_the_run(
    receiver: Receiver, tmp_path: Any
) -> None:
    """ALERT_ON = 'always' over a passing run: the alert is the output asked for, and
    losing it is not a success."""
    receiver.fail["gone"] = [410]
    crawler = Crawler(
        Quiet,
        {
            "MONITOR_MIN_ITEMS": 1,
            "ALERT_ON": "always",
            "ALERT_WEBHOOKS": [receiver.url("gone")],
            "MONITOR_REPORT_DIR": str(tmp_path),
        },
    )
    with pytest.raises(MonitorsFailed, match=r"1 alert\(s\) could not be delivered"):
        await crawler.run()
    assert crawler.stats.get("monitors/status") == "passed"
