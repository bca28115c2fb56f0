"""Scrapy's settings that skitter does not implement, and what to use instead.

A Scrapy project ported to skitter brings its ``settings.py`` and ``custom_settings``.
Every one of Scrapy's setting names is either implemented with Scrapy's meaning (it is
in ``skitter.settings.SETTINGS``) or listed here, and then refused at start with a
message naming it, so that nothing a user configured is silently ignored. A value that
asks for what skitter does anyway (``TELNETCONSOLE_ENABLED = False``, the asyncio
reactor, an empty ``FEED_STORAGE_GCS_ACL``) is accepted: honouring it costs
nothing and refusing it would only break ports. tests/settings/test_scrapy_settings.py holds the
full list of Scrapy's names and checks that none is accepted without meaning.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["UNSUPPORTED", "Unsupported", "scrapy_names"]


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A Scrapy setting skitter does not implement: why, and what to do instead.

    ``accepts`` are the values that ask for skitter's own behaviour (compared after
    reading strings from the command line as booleans, numbers or None). ``owner`` is
    whose setting it is (a refusal names it): Scrapy's, or an add-on's (Spidermon)."""

    hint: str
    accepts: tuple[Any, ...] = ()
    owner: str = "Scrapy"

    def allows(self, value: Any) -> bool:
        for accepted in self.accepts:
            candidate = _read(value, type(accepted)) if isinstance(value, str) else value
            if candidate == accepted and type(candidate) is type(accepted):
                return True
            if accepted in ({}, [], None, "") and not candidate:
                return True  # an empty ADDONS, EXTENSIONS, LOG_FILE ...
        return False


def _read(text: str, kind: type) -> Any:
    """A string from the command line or the environment as the accepted value's type."""
    low = text.strip().lower()
    if kind is bool:
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off", ""):
            return False
    if low in ("none", "null", ""):
        return None
    if kind in (int, float):
        try:
            return kind(low)
        except ValueError:
            pass
    return text.strip()


@functools.cache
def scrapy_names() -> frozenset[str]:
    """Every one of Scrapy's setting names (``scrapy_settings.txt``), read on first use:
    only the settings reference and the tests need them, not a crawl."""
    text = resources.files("skitter.settings").joinpath("scrapy_settings.txt").read_text()
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


_LATER = "not supported yet"
_ASYNCIO = "skitter runs on asyncio, not Twisted"
_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


def _group(names: str, hint: str, *accepts: Any) -> dict[str, Unsupported]:
    return {name: Unsupported(hint, accepts) for name in names.split()}


UNSUPPORTED: Mapping[str, Unsupported] = {
    **_group("AJAXCRAWL_ENABLED", "AJAX crawlable pages are not supported", False),
    **_group("AJAXCRAWL_MAXSIZE", "AJAX crawlable pages are not supported"),
    **_group(
        "CLOSESPIDER_PAGECOUNT_NO_ITEM CLOSESPIDER_TIMEOUT_NO_ITEM",
        _LATER + "; use CLOSESPIDER_PAGECOUNT or CLOSESPIDER_TIMEOUT",
        0,
    ),
    **_group(
        "CRAWLSPIDER_FOLLOW_LINKS",
        "deprecated in Scrapy; set follow=False on the CrawlSpider's rules instead",
        True,
    ),
    **_group("DEFAULT_DROPITEM_LOG_LEVEL", "dropped items are logged at WARNING", "WARNING"),
    **_group(
        "DEFAULT_ITEM_CLASS",
        "only old Scrapy shells read it (skitter's shell has no item object); "
        "set default_item_class on your ItemLoader subclass",
    ),
    **_group(
        "TWISTED_DNS_RESOLVER",
        _ASYNCIO + "; set DNS_RESOLVER to a class with an async resolve(host)",
        "scrapy.resolver.CachingThreadedResolver",
        "scrapy.resolver.CachingHostnameResolver",
    ),
    **_group("DOWNLOAD_BIND_ADDRESS", _LATER, None),
    **_group(
        "DOWNLOAD_HANDLERS_BASE",
        "the built-in handlers cannot be replaced: set DOWNLOAD_HANDLERS per scheme (None "
        "switches one off); http(s) goes to DOWNLOAD_TRANSPORT",
        {},
    ),
    **_group(
        "DOWNLOADER_CLIENTCONTEXTFACTORY",
        "the TLS context is built from DOWNLOAD_VERIFY_CERTIFICATES, DOWNLOAD_TLS_MIN_VERSION, "
        "DOWNLOAD_TLS_MAX_VERSION, DOWNLOADER_CLIENT_TLS_CIPHERS and DOWNLOAD_CLIENT_CERT",
    ),
    **_group(
        "DOWNLOADER_CLIENT_TLS_METHOD",
        "use DOWNLOAD_TLS_MIN_VERSION and DOWNLOAD_TLS_MAX_VERSION",
        "TLS",
    ),
    **_group(
        "DOWNLOADER DOWNLOADER_CLIENT_TLS_VERBOSE_LOGGING "
        "REACTOR_THREADPOOL_MAXSIZE TWISTED_REACTOR_ENABLED",
        _ASYNCIO,
    ),
    **_group(
        "TWISTED_REACTOR",
        _ASYNCIO + " (only the asyncio reactor's path is accepted)",
        _REACTOR,
        None,
    ),
    **_group(
        "DOWNLOADER_MIDDLEWARES_BASE ITEM_PIPELINES_BASE "
        "EXTENSIONS_BASE FEED_EXPORTERS_BASE FEED_STORAGES_BASE",
        "the *_BASE settings cannot be replaced; switch a built-in off with None in "
        "DOWNLOADER_MIDDLEWARES, SPIDER_MIDDLEWARES or EXTENSIONS",
    ),
    **_group("DOWNLOADER_STATS", "downloader stats are always counted", True),
    **_group("SCHEDULER_DEBUG", _LATER, False),
    **_group("EDITOR", "skitter has no edit command: open the spider's file yourself"),
    **_group(
        "FTP_PASSIVE_MODE FTP_USER FTP_PASSWORD",
        "ftp:// downloads are " + _LATER + "; for ftp:// feeds put the user and password in "
        "the URI (passive unless FEED_STORAGE_FTP_ACTIVE)",
    ),
    **_group(
        "FEED_STORAGE_GCS_ACL",
        "a predefined ACL for gs:// feeds is " + _LATER + "; set the bucket's default "
        "object ACL instead",
        None,
        "",
    ),
    **_group(
        "FILES_STORE_GCS_ACL IMAGES_STORE_GCS_ACL",
        "gs:// media stores are " + _LATER + "; FILES_STORE and IMAGES_STORE take a "
        "directory, s3:// or ftp://",
    ),
    **_group("FORCE_CRAWLER_PROCESS", _ASYNCIO, False),
    **_group(
        "HTTP2_MAX_FRAME_SIZE",
        "HTTP/2 is DOWNLOAD_TRANSPORT = 'httpx' (skitter[http2]), with h2's frame size",
    ),
    **_group("HTTPX_HTTP2_ENABLED", "HTTP/2 is DOWNLOAD_TRANSPORT = 'httpx'", False),
    **_group(
        "HTTPPROXY_AUTH_ENCODING", "proxy credentials are encoded as latin-1", "latin-1", "latin1"
    ),
    **_group(
        "ITEM_PROCESSOR SCHEDULER SCHEDULER_DISK_QUEUE SCHEDULER_MEMORY_QUEUE "
        "SCHEDULER_PRIORITY_QUEUE SCHEDULER_START_DISK_QUEUE "
        "SCHEDULER_START_MEMORY_QUEUE SCRAPER_SLOT_MAX_ACTIVE_SIZE STATS_CLASS",
        "skitter's scheduler, frontier and stats are its own and not replaceable "
        "(see the documentation: scheduling, politeness)",
    ),
    **_group(
        "MEMUSAGE_NOTIFY_MAIL STATSMAILER_RCPTS",
        "mail is sent only as an alert on monitor results: ALERT_EMAIL_TO (through MAIL_HOST)",
        [],
    ),
    **_group(
        "MEMDEBUG_ENABLED MEMUSAGE_ENABLED", "the memory usage extensions are " + _LATER, False
    ),
    **_group(
        "MEMUSAGE_CHECK_INTERVAL_SECONDS MEMUSAGE_LIMIT_MB MEMUSAGE_WARNING_MB",
        "the memory usage extension is " + _LATER,
        0,
    ),
    **_group(
        "SPIDER_LOADER_CLASS SPIDER_MANAGER_CLASS",
        "spiders are found by name in SPIDER_MODULES; the loader is not replaceable",
    ),
    **_group("PERIODIC_LOG_DELTA PERIODIC_LOG_STATS", "use LOGSTATS_INTERVAL", None),
    **_group("PERIODIC_LOG_TIMING_ENABLED", "use LOGSTATS_INTERVAL", False),
    **_group(
        "REMOTE_CONTROL_ENABLED TELNETCONSOLE_ENABLED",
        "use the dashboard (--ui) to watch and steer a crawl",
        False,
        0,
    ),
    **_group(
        "REMOTE_CONTROL_JOBS_DIR REMOTE_CONTROL_OUTPUT_MAX_BYTES "
        "REMOTE_CONTROL_TIMEOUT_DEFAULT REMOTE_CONTROL_TIMEOUT_MAX "
        "REMOTE_CONTROL_TRACEBACK_MAX_BYTES TELNETCONSOLE_HOST TELNETCONSOLE_PASSWORD "
        "TELNETCONSOLE_PORT TELNETCONSOLE_USERNAME",
        "use the dashboard (--ui, --ui-host, --ui-port, --ui-token)",
    ),
    **_group(
        "REQUEST_FINGERPRINTER_IMPLEMENTATION",
        "taskids are skitter's own "
        "fingerprints (this setting's only value, '2.7', changes nothing)",
        "2.7",
    ),
    **_group(
        "RETRY_PRIORITY_ADJUST",
        "a retried task keeps its priority and waits RETRY_DELAYS instead",
        0,
    ),
    **_group(
        "WARN_ON_GENERATOR_RETURN_VALUE",
        "not needed: a callback's return value is never used",
        True,
        False,
    ),
}
