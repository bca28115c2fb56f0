"""Alerts on monitor results: a log line, webhooks (Slack, Discord, any JSON receiver),
e-mail through an SMTP server (Scrapy's MAIL_* settings).

Each channel gets every alert; ``Alerts`` delivers it with retries (ALERT_RETRIES times
more, after ALERT_RETRY_DELAY seconds, doubled each time; a refusal that cannot change,
such as an HTTP 404 or a rejected login, is not tried again) and a rate limit: during the
crawl (periodic runs), a channel sends at most one alert per ALERT_MIN_INTERVAL seconds
on the crawl's clock; the alert at the end always goes. What happened to each delivery is
counted (``alerts/<channel>/sent``, ``.../lost``, ``.../suppressed``), logged, and kept
for the run report. A webhook's URL is its credential, so it is shown as scheme and host
only (``mask_endpoint``), in every message, including a library's error.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp

from skitter._clock import Clock
from skitter._secrets import mask_endpoint, mask_text
from skitter._types import StatsSink
from skitter.exceptions import ConfigError
from skitter.settings import AlertSettings, Settings

__all__ = ["Alert", "Alerts", "Channel", "EmailChannel", "LogChannel", "WebhookChannel"]

log = logging.getLogger("skitter.monitors")

FORMATS = ("slack", "discord", "json")
#: Discord refuses longer message contents.
DISCORD_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Alert:
    """One message: a subject line, the text, and the run's summary for JSON receivers."""

    subject: str
    text: str
    status: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    html: str | None = None


class Permanent(Exception):
    """A refusal that sending again would not change."""


class Channel(Protocol):
    """Where alerts go: ``send`` raises when it could not deliver."""

    kind: str
    label: str

    async def send(self, alert: Alert) -> None: ...


class LogChannel:
    kind = "log"
    label = "log"

    async def send(self, alert: Alert) -> None:
        level = logging.ERROR if alert.status == "failed" else logging.WARNING
        log.log(level, "%s\n%s", alert.subject, alert.text)


def _format_of(url: str, given: Any) -> str:
    if given is not None:
        if given not in FORMATS:
            raise ConfigError(f"ALERT_WEBHOOKS: format must be one of {FORMATS}, not {given!r}")
        return str(given)
    host = (urlsplit(url).hostname or "").lower()
    if host.endswith("slack.com"):
        return "slack"
    if host.endswith(("discord.com", "discordapp.com")):
        return "discord"
    return "json"


class WebhookChannel:
    """POSTs the alert as JSON: Slack's ``{"text"}``, Discord's ``{"content"}``, or both
    with the run's summary for any other receiver (``json``)."""

    kind = "webhook"

    def __init__(self, url: str, fmt: str | None = None, *, timeout: float = 10.0) -> None:
        if urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(f"ALERT_WEBHOOKS: {mask_endpoint(url)} is not an http(s) URL")
        self._url = url
        self.format = _format_of(url, fmt)
        self.label = mask_endpoint(url)
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    def payload(self, alert: Alert) -> dict[str, Any]:
        text = f"{alert.subject}\n{alert.text}"
        if self.format == "slack":
            return {"text": text}
        if self.format == "discord":
            return {"content": text[:DISCORD_LIMIT]}
        return {"text": text, "content": text[:DISCORD_LIMIT], "run": dict(alert.summary)}

    async def send(self, alert: Alert) -> None:
        try:
            async with (
                aiohttp.ClientSession(timeout=self._timeout) as session,
                session.post(self._url, json=self.payload(alert)) as response,
            ):
                if response.status < 300:
                    return
                problem = f"HTTP {response.status}"
                if 400 <= response.status < 500 and response.status not in (408, 429):
                    raise Permanent(problem)
                raise OSError(problem)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise OSError(str(exc).replace(self._url, self.label) or type(exc).__name__) from None


class EmailChannel:
    """Sends the alert by e-mail (text, and the HTML report as its alternative) through
    MAIL_HOST:MAIL_PORT, over TLS with MAIL_SSL, upgraded with MAIL_TLS, logged in as
    MAIL_USER when set."""

    kind = "email"

    def __init__(
        self, recipients: Sequence[str], settings: Settings, *, timeout: float = 10.0
    ) -> None:
        if isinstance(recipients, str) or not all(isinstance(r, str) for r in recipients):
            raise ConfigError("ALERT_EMAIL_TO must be a list of addresses")
        self._to = list(recipients)
        mail = settings.view(AlertSettings)
        self._host = str(mail.mail_host)
        self._port = int(mail.mail_port)
        self._sender = str(mail.mail_from)
        self._user = mail.mail_user
        self._password = mail.mail_pass
        self._tls, self._ssl = bool(mail.mail_tls), bool(mail.mail_ssl)
        if self._tls and self._ssl:
            raise ConfigError("MAIL_TLS (STARTTLS) and MAIL_SSL (SMTPS) exclude each other")
        self._timeout = timeout
        self.label = f"{', '.join(self._to)} via {self._host}:{self._port}"

    def message(self, alert: Alert) -> EmailMessage:
        mail = EmailMessage()
        mail["Subject"] = alert.subject
        mail["From"] = self._sender
        mail["To"] = ", ".join(self._to)
        mail.set_content(alert.text)
        if alert.html is not None:
            mail.add_alternative(alert.html, subtype="html")
        return mail

    async def send(self, alert: Alert) -> None:
        await asyncio.to_thread(self._send, self.message(alert))

    def _send(self, mail: EmailMessage) -> None:
        import smtplib  # here: a crawl that mails no alert never loads it

        context = ssl.create_default_context()
        smtp_class = smtplib.SMTP_SSL if self._ssl else smtplib.SMTP
        extra: dict[str, Any] = {"context": context} if self._ssl else {}
        try:
            with smtp_class(self._host, self._port, timeout=self._timeout, **extra) as smtp:
                if self._tls:
                    smtp.starttls(context=context)
                if self._user:
                    smtp.login(self._user, self._password or "")
                smtp.send_message(mail)
        except (smtplib.SMTPAuthenticationError, smtplib.SMTPRecipientsRefused) as exc:
            raise Permanent(f"{type(exc).__name__}: {exc}") from None
        except (smtplib.SMTPException, OSError) as exc:
            raise OSError(f"{type(exc).__name__}: {exc}") from None


class Alerts:
    """Delivers alerts to every channel (see the module's docstring)."""

    def __init__(
        self,
        channels: Sequence[Channel],
        *,
        stats: StatsSink,
        clock: Clock,
        retries: int = 3,
        delay: float = 2.0,
        min_interval: float = 600.0,
    ) -> None:
        self.channels = list(channels)
        self._stats = stats
        self._clock = clock
        self._retries = max(0, retries)
        self._delay = delay
        self._min_interval = min_interval
        self._last: dict[int, float] = {}
        #: What happened to each delivery: {"channel", "target", "delivered", "error"}.
        self.deliveries: list[dict[str, Any]] = []

    async def send(self, alert: Alert, *, final: bool) -> None:
        await asyncio.gather(*(self._deliver(c, alert, final) for c in self.channels))

    async def _deliver(self, channel: Channel, alert: Alert, final: bool) -> None:
        now = self._clock.monotonic()
        last = self._last.get(id(channel))
        key = f"alerts/{channel.kind}"
        if not final and last is not None and now - last < self._min_interval:
            self._stats.inc(f"{key}/suppressed")
            log.info("Alert to %s held back (ALERT_MIN_INTERVAL)", channel.label)
            return
        self._last[id(channel)] = now
        error = await self._attempts(channel, alert)
        record = {"channel": channel.kind, "target": channel.label, "final": final}
        if error is None:
            self._stats.inc(f"{key}/sent")
            self.deliveries.append({**record, "delivered": True, "error": None})
            return
        self._stats.inc(f"{key}/lost")
        self._stats.inc("alerts/lost")
        self.deliveries.append({**record, "delivered": False, "error": error})
        log.error("Alert to %s could not be delivered: %s", channel.label, error)

    async def _attempts(self, channel: Channel, alert: Alert) -> str | None:
        """None once delivered, else why the last attempt failed."""
        delay = self._delay
        error = ""
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(delay)
                delay *= 2
            try:
                await channel.send(alert)
            except Permanent as exc:
                return mask_text(str(exc))
            except Exception as exc:
                error = mask_text(str(exc) or type(exc).__name__)
                log.warning("Alert to %s failed (try %d): %s", channel.label, attempt + 1, error)
            else:
                return None
        return error
