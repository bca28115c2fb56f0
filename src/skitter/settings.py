"""Settings: one registry of known names, resolved once per crawl in layers.

Where a concept is Scrapy's, the name and meaning are Scrapy's, so a Scrapy user's
``-s CONCURRENT_REQUESTS=64`` works unchanged. Layers, lowest first::

    defaults < project (Crawler(settings=...)) < spider.custom_settings < env SKITTER_* < CLI -s

Values coming from strings (environment, command line) are converted by the type of the
registered setting, so ``-s RETRY_HTTP_CODES=500,503`` is a list of ints. Unknown names
are kept (spiders and plugins may define their own) but a name within a typo of a known
one is refused, because a silently ignored ``CONCURENT_REQUESTS`` costs users hours. So
is every Scrapy setting skitter does not implement (``_scrapy_settings``), with what to
use instead: a ported project's ``HTTPCACHE_ENABLED = True`` must not be a no-op.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skitter._scrapy_settings import UNSUPPORTED
from skitter._secrets import mask_setting, mask_text
from skitter.exceptions import ConfigError

__all__ = ["SETTINGS", "Setting", "Settings"]

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, slots=True)
class Setting:
    """A known setting: its default, the type strings are parsed as, and what it does."""

    name: str
    default: Any
    kind: type
    doc: str


_REGISTRY: list[Setting] = [
    # -- engine -------------------------------------------------------------------------
    Setting("CONCURRENT_REQUESTS", 16, int, "Downloads in flight at once, over all hosts."),
    Setting("CONCURRENT_REQUESTS_PER_DOMAIN", 8, int, "Downloads in flight at once per slot."),
    Setting("DOWNLOAD_DELAY", 0.0, float, "Seconds between two downloads from one slot."),
    Setting("RANDOMIZE_DOWNLOAD_DELAY", True, bool, "Wait 0.5x to 1.5x DOWNLOAD_DELAY, as Scrapy."),
    Setting(
        "DOWNLOAD_SLOTS",
        {},
        dict,
        "Per-slot overrides {slot: {'concurrency', 'delay', 'randomize_delay', 'throttle', "
        "'rate', 'burst', 'breaker_threshold', 'breaker_pause', 'breaker_probes'}}.",
    ),
    Setting(
        "DOWNLOAD_SLOT_RATE",
        0.0,
        float,
        "Token bucket per slot: downloads per second on average; 0 = no limit.",
    ),
    Setting("DOWNLOAD_SLOT_BURST", 0.0, float, "Token bucket capacity per slot; 0 = 10 x rate."),
    Setting(
        "DOWNLOAD_SLOT_BREAKER_THRESHOLD",
        0,
        int,
        "Consecutive failures that pause a slot for 300 s before probing it; 0 = off.",
    ),
    Setting("AUTOTHROTTLE_ENABLED", False, bool, "Adapt each slot's delay to its latency."),
    Setting("AUTOTHROTTLE_START_DELAY", 5.0, float, "AutoThrottle's first delay per slot."),
    Setting("AUTOTHROTTLE_MAX_DELAY", 60.0, float, "Longest delay AutoThrottle sets."),
    Setting(
        "AUTOTHROTTLE_TARGET_CONCURRENCY",
        1.0,
        float,
        "Downloads AutoThrottle aims to keep in flight per slot, on average.",
    ),
    Setting("AUTOTHROTTLE_DEBUG", False, bool, "Log every AutoThrottle adjustment."),
    Setting("DEPTH_LIMIT", 0, int, "Links deeper than this are dropped; 0 = no limit."),
    Setting(
        "DEPTH_PRIORITY",
        0,
        int,
        "Subtracted from a request's priority per level of depth (positive: breadth-first).",
    ),
    Setting("URLLENGTH_LIMIT", 2083, int, "Requests with longer URLs are dropped; 0 = no limit."),
    Setting("REFERER_ENABLED", True, bool, "Send the page a link was found on as Referer."),
    Setting(
        "BOT_NAME",
        "skitter",
        str,
        "The project's name (Scrapy's), in the log line each crawl starts with.",
    ),
    Setting(
        "JOBDIR",
        "",
        str,
        "Keep the crawl's state in this directory, as --job-dir does (Scrapy's name).",
    ),
    Setting("CLOSESPIDER_ITEMCOUNT", 0, int, "Stop after this many items; 0 = never."),
    Setting("CLOSESPIDER_PAGECOUNT", 0, int, "Stop after this many responses; 0 = never."),
    Setting("CLOSESPIDER_ERRORCOUNT", 0, int, "Stop after this many errors; 0 = never."),
    Setting("CLOSESPIDER_TIMEOUT", 0.0, float, "Stop after this many seconds; 0 = never."),
    Setting(
        "SHUTDOWN_TIMEOUT",
        30.0,
        float,
        "After the first Ctrl-C, seconds in-flight requests may take before they are cut.",
    ),
    # -- scheduler (pyspider's, SPEC §2) ---------------------------------------------------
    Setting("RATE", None, float, "Project token bucket: tasks per second; None = unlimited."),
    Setting("BURST", None, float, "Project token bucket capacity; None = 10 x RATE."),
    Setting("MAX_RATE", None, float, "Highest RATE that may be set, also live; None = no cap."),
    Setting("MAX_BURST", None, float, "Highest BURST that may be set, also live."),
    Setting("BREAKER_THRESHOLD", 10, int, "Consecutive failed tasks that pause a project."),
    Setting("BREAKER_PAUSE", 300.0, float, "Seconds a project stays paused by its breaker."),
    Setting("BREAKER_PROBES", 3, int, "Tasks let through after a pause to probe the site."),
    Setting(
        "PROCESSING_TIMEOUT",
        600.0,
        float,
        "Seconds a leased task may take before it is put back in the queue.",
    ),
    Setting("FAIRSHARE_MIN", 0.10, float, "Least share of dispatches a backlogged project gets."),
    Setting("FAIRSHARE_MAX", 0.33, float, "Most share of dispatches one project gets."),
    Setting("FAIRSHARE_WINDOW", 1000, int, "Dispatches over which shares are counted."),
    Setting(
        "DOWNLOAD_SLOT_BY",
        "host",
        str,
        "What a download slot is: host (Scrapy's), netloc (host and port) or ip (the "
        "resolved address: hosts on one server share its limits).",
    ),
    Setting(
        "FRONTIER_OUTAGE_TIMEOUT",
        600.0,
        float,
        "Seconds the task store (Redis) may stay unavailable before the crawl fails; "
        "0 = wait for ever.",
    ),
    Setting(
        "SCHEDULER_MAX_HELD",
        10_000,
        int,
        "Leased tasks a process keeps in its slot queues; more are leased only when none "
        "of those can start.",
    ),
    # -- distributed crawling on Redis (SPEC §4) -------------------------------------------
    Setting(
        "LEASE_SECONDS",
        30.0,
        float,
        "Workers: how long a leased task is a worker's before others may take it "
        "(renewed while it runs).",
    ),
    Setting(
        "WORKER_IDLE_TIMEOUT",
        5.0,
        float,
        "Workers: seconds the whole cluster must be idle before they exit; -1 = wait "
        "for pushed URLs forever.",
    ),
    Setting("REDIS_QUEUE_KIND", "priority", str, "Workers: priority, fifo or lifo."),
    Setting(
        "REDIS_PUSH_CACHE",
        100_000,
        int,
        "Workers: taskids a worker remembers pushing, so that links to them are not "
        "sent to Redis again (0 = off).",
    ),
    Setting(
        "REDIS_DUPEFILTER",
        "exact",
        str,
        "Workers: 'exact' (every finished task's outcome and time: recrawl by age and itag) "
        "or 'bloom' (successes as a few bits each: no recrawl by age or itag).",
    ),
    Setting(
        "REDIS_BLOOM_CAPACITY",
        10_000_000,
        int,
        "Workers: URLs the Bloom filter is sized for (more raise its false-positive rate).",
    ),
    Setting(
        "REDIS_BLOOM_ERROR_RATE",
        0.001,
        float,
        "Workers: the Bloom filter's false-positive rate at capacity (0.001: 1.8 bytes per URL).",
    ),
    Setting(
        "REDIS_BAD_MAX",
        10_000,
        int,
        "Workers: entries the job's bad hash keeps of what was moved aside as unreadable "
        "(the oldest are dropped, and counted); 0 = count only.",
    ),
    Setting("REDIS_PERSIST", True, bool, "Workers: keep queue and dupe filter after the crawl."),
    Setting(
        "REDIS_FLUSH_ON_START", False, bool, "Workers: clear the job's queue and filter first."
    ),
    # -- downloader ---------------------------------------------------------------------
    Setting("USER_AGENT", "skitter/0.1", str, "The User-Agent header of every request."),
    Setting(
        "DEFAULT_REQUEST_HEADERS",
        {
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": "en",
        },
        dict,
        "Headers added to requests that do not set them.",
    ),
    Setting("DOWNLOAD_TIMEOUT", 180.0, float, "Seconds a whole download may take."),
    Setting("DOWNLOAD_CONNECT_TIMEOUT", 30.0, float, "Seconds to open a connection."),
    Setting("DOWNLOAD_READ_TIMEOUT", 60.0, float, "Seconds without a byte from the server."),
    Setting(
        "DOWNLOAD_MAXSIZE",
        64 * MiB,
        int,
        "Largest body in bytes after decompression; larger ones are cut off and fail. 0 = no "
        "limit.",
    ),
    Setting("DOWNLOAD_WARNSIZE", 32 * MiB, int, "Log a warning for bodies above this size."),
    Setting(
        "DOWNLOAD_MAX_HEADERS_SIZE",
        256 * KiB,
        int,
        "Largest total of a response's header names and values in bytes; larger responses "
        "fail, not retried. 0 = only aiohttp's limits (128 lines of at most 32 KiB).",
    ),
    Setting("COMPRESSION_ENABLED", True, bool, "Ask for and decode gzip, deflate, br and zstd."),
    Setting("COOKIES_ENABLED", True, bool, "Keep cookies per spider (and per meta cookiejar)."),
    Setting("REDIRECT_ENABLED", True, bool, "Follow 301/302/303/307/308 redirects."),
    Setting("REDIRECT_MAX_TIMES", 20, int, "Longest redirect chain followed."),
    Setting("REDIRECT_PRIORITY_ADJUST", 2, int, "Added to the priority of a redirected request."),
    Setting("RETRY_ENABLED", True, bool, "Retry network errors and RETRY_HTTP_CODES."),
    Setting("RETRY_TIMES", 3, int, "Retries after the first attempt."),
    Setting(
        "RETRY_HTTP_CODES",
        [408, 429, 500, 502, 503, 504, 522, 524],
        list,
        "Statuses that count as a failed, retryable attempt.",
    ),
    Setting(
        "RETRY_DELAYS",
        [0.5, 2.0, 8.0],
        list,
        "Seconds before retry n (the last repeats) in `crawl` mode; a Retry-After header "
        "that asks for longer wins.",
    ),
    Setting("HTTPPROXY_ENABLED", True, bool, "Honour meta['proxy'] and *_proxy variables."),
    Setting("HTTPERROR_ALLOWED_CODES", [], list, "Non-2xx statuses passed to callbacks."),
    Setting("HTTPERROR_ALLOW_ALL", False, bool, "Pass every status to callbacks."),
    Setting("ROBOTSTXT_OBEY", False, bool, "Fetch robots.txt per host and obey it."),
    Setting(
        "ROBOTSTXT_USER_AGENT", "", str, "User agent to match in robots.txt (default USER_AGENT)."
    ),
    # -- browser rendering (requests with render=True) ------------------------------------
    Setting(
        "BROWSER_RENDER",
        False,
        bool,
        "Render every request in the browser, as if render=True (a spider's `render` "
        "attribute wins); meta['dont_render'] opts one out.",
    ),
    Setting("BROWSER_CONCURRENCY", 2, int, "Pages rendered at once (each in its own context)."),
    Setting(
        "BROWSER_EXECUTABLE_PATH",
        "",
        str,
        "Chromium to run; empty = chromium, chromium-browser or google-chrome on PATH.",
    ),
    Setting(
        "BROWSER_BLOCK_RESOURCES",
        ["image", "media", "font"],
        list,
        "Resource types a rendered page may not load (add 'stylesheet' for speed); [] = none.",
    ),
    Setting(
        "BROWSER_WAIT_UNTIL",
        "load",
        str,
        "When a page counts as loaded: load, domcontentloaded, networkidle or commit "
        "(meta['browser_wait_until'] per request).",
    ),
    Setting(
        "BROWSER_SHARE_COOKIES",
        False,
        bool,
        "Rendered pages use and update the cookie jar of the HTTP requests (CookiesMiddleware).",
    ),
    # -- components -----------------------------------------------------------------------
    Setting(
        "DOWNLOADER_MIDDLEWARES",
        {},
        dict,
        "Extra downloader middlewares {path or class: order}; None disables a built-in.",
    ),
    Setting(
        "SPIDER_MIDDLEWARES",
        {},
        dict,
        "Extra spider middlewares {path or class: order}; None disables a built-in.",
    ),
    Setting("ITEM_PIPELINES", {}, dict, "Item pipelines {path or class: order}, low first."),
    Setting("FEEDS", {}, dict, "Feed exports {path: {'format': 'jsonl'|'json'|'csv', ...}}."),
    Setting(
        "FEED_EXPORT_ENCODING",
        None,
        str,
        "Encoding of every feed that sets none in its FEEDS options; None = UTF-8.",
    ),
    # -- output ---------------------------------------------------------------------------
    Setting("LOG_LEVEL", "INFO", str, "DEBUG, INFO, WARNING or ERROR."),
    Setting("LOGSTATS_INTERVAL", 60.0, float, "Seconds between progress lines off a terminal."),
    Setting("STATS_DUMP", True, bool, "Print the stats table when the crawl ends."),
]

SETTINGS: Mapping[str, Setting] = {s.name: s for s in _REGISTRY}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _parse_str(name: str, raw: str, kind: type) -> Any:
    """Turn a string from the environment or command line into the setting's type."""
    text = raw.strip()
    spec = SETTINGS.get(name)
    if spec is not None and spec.default is None and text.lower() in ("", "none", "null"):
        return None
    try:
        if kind is bool:
            low = text.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError(f"expected true/false, got {raw!r}")
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind is list:
            if text.startswith("["):
                return json.loads(text)
            return [_scalar(part) for part in text.split(",") if part.strip()]
        if kind is dict:
            value = json.loads(text or "{}")
            if not isinstance(value, dict):
                raise ValueError("expected a JSON object")
            return value
    except (ValueError, json.JSONDecodeError) as exc:
        shown = mask_setting(name, raw)
        message = f"setting {name}: cannot read {shown} as {kind.__name__}: {mask_text(str(exc))}"
        raise ConfigError(message) from None
    return raw


def _scalar(part: str) -> Any:
    part = part.strip()
    for conv in (int, float):
        try:
            return conv(part)
        except ValueError:
            pass
    return part


def _coerce(name: str, value: Any) -> Any:
    spec = SETTINGS.get(name)
    if spec is None:
        return value
    if isinstance(value, str) and spec.kind is not str:
        return _parse_str(name, value, spec.kind)
    if spec.kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if spec.kind is list and isinstance(value, tuple | set | frozenset):
        return list(value)
    if value is not None and not isinstance(value, spec.kind):
        raise ConfigError(
            f"setting {name} must be {spec.kind.__name__}, got {type(value).__name__} "
            f"{mask_setting(name, value)}"
        )
    return value


_KNOWN_NAMES = (*SETTINGS, *UNSUPPORTED)


def _check(name: str, value: Any) -> None:
    """Refuse a Scrapy setting skitter does not implement, and a typo of a known name."""
    if name in SETTINGS or not name.isupper():
        return
    unsupported = UNSUPPORTED.get(name)
    if unsupported is not None:
        if unsupported.allows(value):
            return
        raise ConfigError(
            f"setting {name} ({mask_setting(name, value)}) is Scrapy's, and skitter does not "
            f"implement it: {unsupported.hint}"
        )
    close = difflib.get_close_matches(name, _KNOWN_NAMES, n=1, cutoff=0.88)
    if close:
        raise ConfigError(f"unknown setting {name!r}: did you mean {close[0]!r}?")


class Settings(Mapping[str, Any]):
    """An immutable, resolved set of settings. Unset known names read as their default."""

    __slots__ = ("_sources", "_values")

    def __init__(self, values: Mapping[str, Any] | None = None, *, source: str = "project"):
        self._values: dict[str, Any] = {}
        self._sources: dict[str, str] = {}
        if values:
            self._merge(values, source)

    def _merge(self, values: Mapping[str, Any], source: str) -> None:
        for name, value in values.items():
            _check(name, value)
            self._values[name] = _coerce(name, value)
            self._sources[name] = source

    def with_layer(self, values: Mapping[str, Any] | None, source: str) -> Settings:
        """A copy with ``values`` laid over this one."""
        new = Settings()
        new._values = dict(self._values)
        new._sources = dict(self._sources)
        if values:
            new._merge(values, source)
        return new

    @classmethod
    def resolve(
        cls,
        project: Mapping[str, Any] | None = None,
        spider: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        cli: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Lay the four layers over the defaults, lowest first.

        ``env`` is the process environment by default; only ``SKITTER_<NAME>`` variables
        for known settings (and Scrapy's, to refuse those skitter lacks) are read from it.
        """
        environ = os.environ if env is None else env
        from_env = {  # Scrapy's names too, so that an unsupported one is refused
            name: environ[f"SKITTER_{name}"]
            for name in _KNOWN_NAMES
            if f"SKITTER_{name}" in environ
        }
        out = cls(project, source="project")
        for values, source in ((spider, "spider"), (from_env, "env"), (cli, "cli")):
            out = out.with_layer(values, source)
        return out

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            spec = SETTINGS.get(name)
            if spec is None:
                raise
            default = spec.default
            # Defaults are shared: hand out copies of the mutable ones.
            return default.copy() if isinstance(default, list | dict) else default

    def __contains__(self, name: object) -> bool:
        return name in self._values or name in SETTINGS

    def __iter__(self) -> Iterator[str]:
        yield from SETTINGS
        yield from (name for name in self._values if name not in SETTINGS)

    def __len__(self) -> int:
        return len(SETTINGS) + sum(1 for name in self._values if name not in SETTINGS)

    def source(self, name: str) -> str:
        """Which layer set ``name``: default, project, spider, env or cli."""
        return self._sources.get(name, "default")

    def __repr__(self) -> str:
        # Secrets (AWS_*, *_PASSWORD, a URL's password...) are shown masked.
        shown = ", ".join(f"{name!r}: {mask_setting(name, v)}" for name, v in self._values.items())
        return f"Settings({{{shown}}})"
