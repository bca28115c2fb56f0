"""Download slots: what a slot is, and the politeness policy each slot follows.

A slot is the key that groups requests for politeness: the host by default, or
``request.meta["download_slot"]``. ``SlotPolicy`` is one slot's limits: ``concurrency``
downloads at once, at least ``delay`` seconds between two starts (randomized 0.5x-1.5x,
as Scrapy's RANDOMIZE_DOWNLOAD_DELAY), and optionally a token bucket and a circuit
breaker. ``SlotPolicies`` gives every slot its policy: the defaults from the settings,
overridden per slot by DOWNLOAD_SLOTS (Scrapy's setting, same shape)::

    DOWNLOAD_SLOTS = {"example.com": {"concurrency": 2, "delay": 1.0}}

``SlotQueues`` (``_slotqueue``) applies the policies, keeping a ``SlotState`` per live
slot. ``SlotTable`` is the older,
queue-less bookkeeping the scheduler used before per-slot queues; it goes once the
scheduler has moved to ``SlotQueues``.
"""

from __future__ import annotations

import asyncio
import difflib
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from skitter._clock import Clock
from skitter.exceptions import ConfigError
from skitter.http import Request, url_host
from skitter.http.wiring import url_netloc
from skitter.scheduler._breaker import CircuitBreaker
from skitter.scheduler._tokenbucket import TokenBucket
from skitter.settings import PolitenessSettings, Settings

if TYPE_CHECKING:
    from skitter.extensions.wiring import AutoThrottle

__all__ = [
    "SLOT_KEYS",
    "IpSlotKey",
    "SlotPolicies",
    "SlotPolicy",
    "SlotState",
    "netloc_slot_key",
    "slot_key",
    "slot_key_function",
]

T = TypeVar("T")


def slot_key(request: Request) -> str:
    """The slot of ``request``: ``meta["download_slot"]`` or the URL's host."""
    meta = request.meta
    if meta:
        key = meta.get("download_slot")
        if key is not None:
            return str(key)
    return url_host(request.url)


def netloc_slot_key(request: Request) -> str:
    """Like ``slot_key``, but host and port: for services on one host, several ports."""
    meta = request.meta
    if meta:
        key = meta.get("download_slot")
        if key is not None:
            return str(key)
    return url_netloc(request.url)


Resolver = Callable[[str], Awaitable[str | None]]


async def _resolve(host: str) -> str | None:
    """The first address of ``host`` (None when it does not resolve)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None)
    except OSError:
        return None
    return str(infos[0][4][0]) if infos else None


class IpSlotKey:
    """Slots by resolved IP address: hosts served by one machine share its politeness.

    Calling it is synchronous (the scheduler's hot path); ``prepare`` resolves the hosts
    of a batch of requests ahead, through the event loop's resolver, and caches them. A
    host not resolved (yet, or at all) is its own slot.
    """

    def __init__(self, resolver: Resolver = _resolve, cache_size: int = 100_000) -> None:
        self._resolver = resolver
        self._cache_size = cache_size
        self._ips: dict[str, str] = {}

    def __call__(self, request: Request) -> str:
        meta = request.meta
        if meta:
            key = meta.get("download_slot")
            if key is not None:
                return str(key)
        host = url_host(request.url)
        return self._ips.get(host, host)

    async def prepare(self, requests: Iterable[Request]) -> None:
        hosts = {url_host(r.url) for r in requests} - self._ips.keys()
        hosts.discard("")
        if not hosts:
            return
        if len(self._ips) + len(hosts) > self._cache_size:
            self._ips.clear()  # a crude bound; resolving again is cheap
        ordered = sorted(hosts)
        found = await asyncio.gather(*(self._resolver(host) for host in ordered))
        for host, ip in zip(ordered, found, strict=True):
            self._ips[host] = ip if ip is not None else host


SLOT_KEYS: dict[str, Callable[[Resolver], Callable[[Request], str]]] = {
    "host": lambda _: slot_key,
    "netloc": lambda _: netloc_slot_key,
    "ip": IpSlotKey,
}


def slot_by(settings: Settings) -> str:
    """DOWNLOAD_SLOT_BY, or ``ip`` when CONCURRENT_REQUESTS_PER_IP is set (Scrapy's)."""
    by = settings.view(PolitenessSettings).download_slot_by
    if not settings.view(PolitenessSettings).concurrent_requests_per_ip:
        return by
    if settings.source("DOWNLOAD_SLOT_BY") != "default" and by != "ip":
        raise ConfigError(
            f"CONCURRENT_REQUESTS_PER_IP makes slots by IP, but DOWNLOAD_SLOT_BY is {by!r}"
        )
    return "ip"


def slot_key_function(by: str, resolve: Resolver = _resolve) -> Callable[[Request], str]:
    """The slot function for DOWNLOAD_SLOT_BY (``host``, ``netloc`` or ``ip``); ``ip``
    looks hosts up with ``resolve`` (the crawl's resolver, which the transport asks too)."""
    try:
        return SLOT_KEYS[by](resolve)
    except KeyError:
        raise ConfigError(
            f"DOWNLOAD_SLOT_BY must be one of {', '.join(SLOT_KEYS)}, got {by!r}"
        ) from None


@dataclass(frozen=True, slots=True)
class SlotPolicy:
    """One slot's politeness limits. Field names are the keys of a DOWNLOAD_SLOTS entry
    (Scrapy's ``concurrency``, ``delay``, ``randomize_delay``, ``throttle``, plus
    skitter's token bucket and breaker)."""

    concurrency: int = 8
    """Downloads in flight at once (CONCURRENT_REQUESTS_PER_DOMAIN)."""
    delay: float = 0.0
    """Seconds between two download starts (DOWNLOAD_DELAY); AutoThrottle's floor."""
    randomize_delay: bool = True
    """Wait 0.5x-1.5x ``delay`` instead of exactly ``delay`` (RANDOMIZE_DOWNLOAD_DELAY)."""
    rate: float | None = None
    """Token bucket: downloads per second on average; None (or 0) = no bucket."""
    burst: float | None = None
    """Token bucket capacity; None = ten seconds' worth of ``rate``."""
    breaker_threshold: int = 0
    """Consecutive failures that pause the slot; 0 = no breaker."""
    breaker_pause: float = 300.0
    """Seconds an open breaker pauses the slot before probing."""
    breaker_probes: int = 3
    """Downloads let through to probe a slot after its pause."""
    throttle: bool = True
    """Whether AutoThrottle (when enabled) adjusts this slot's delay."""

    def __post_init__(self) -> None:
        _check_int("concurrency", self.concurrency, 1)
        _check_int("breaker_threshold", self.breaker_threshold, 0)
        _check_int("breaker_probes", self.breaker_probes, 1)
        _check_seconds("delay", self.delay)
        _check_seconds("breaker_pause", self.breaker_pause)
        for name in ("rate", "burst"):
            value = getattr(self, name)
            if value is not None:
                _check_seconds(name, value)
        for name in ("randomize_delay", "throttle"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.burst is not None and self.burst < 1:
            raise ConfigError(f"burst must be at least 1 download, got {self.burst!r}")
        if self.rate == 0:  # the settings' way of saying "no bucket"
            object.__setattr__(self, "rate", None)


_POLICY_KEYS = tuple(f.name for f in fields(SlotPolicy))


class SlotPolicies:
    """The policy of every slot: ``default`` unless DOWNLOAD_SLOTS overrides it.

    Slot keys match case-insensitively (host names do). Overrides are checked when
    this is built, so a typo in DOWNLOAD_SLOTS fails at start-up naming the slot and
    the key, not in the middle of a crawl.
    """

    __slots__ = ("_overrides", "default")

    def __init__(
        self,
        default: SlotPolicy | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.default = default if default is not None else SlotPolicy()
        self._overrides: dict[str, SlotPolicy] = {}
        for key, values in (overrides or {}).items():
            self._overrides[str(key).lower()] = self._override(str(key), values)

    def _override(self, key: str, values: Mapping[str, Any]) -> SlotPolicy:
        if not isinstance(values, Mapping):
            raise ConfigError(f"DOWNLOAD_SLOTS[{key!r}] must be a dict, got {values!r}")
        for name in values:
            if name not in _POLICY_KEYS:
                close = difflib.get_close_matches(str(name), _POLICY_KEYS, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ConfigError(f"DOWNLOAD_SLOTS[{key!r}]: unknown key {name!r}{hint}")
        try:
            return replace(self.default, **values)
        except ConfigError as exc:
            raise ConfigError(f"DOWNLOAD_SLOTS[{key!r}]: {exc}") from None

    @classmethod
    def from_settings(cls, settings: Settings) -> SlotPolicies:
        """Defaults from CONCURRENT_REQUESTS_PER_IP (when set; slots are IPs then) or
        CONCURRENT_REQUESTS_PER_DOMAIN, DOWNLOAD_DELAY, RANDOMIZE_DOWNLOAD_DELAY and
        DOWNLOAD_SLOT_*; overrides from DOWNLOAD_SLOTS."""
        own = settings.view(PolitenessSettings)
        default = SlotPolicy(
            concurrency=own.concurrent_requests_per_ip or own.concurrent_requests_per_domain,
            delay=own.download_delay,
            randomize_delay=own.randomize_download_delay,
            rate=own.download_slot_rate or None,
            burst=own.download_slot_burst or None,
            breaker_threshold=own.download_slot_breaker_threshold,
        )
        return cls(default, own.download_slots)

    def __getitem__(self, key: str) -> SlotPolicy:
        if self._overrides:
            policy = self._overrides.get(key.lower())
            if policy is not None:
                return policy
        return self.default

    def __repr__(self) -> str:
        return f"SlotPolicies({self.default!r}, overrides={sorted(self._overrides)})"


class SlotState(Generic[T]):
    """What ``SlotQueues`` keeps per live slot: its queue, counters and timers."""

    __slots__ = (
        "backoff_level",
        "backoff_until",
        "breaker",
        "bucket",
        "delay",
        "done",
        "failed",
        "in_flight",
        "key",
        "last_end",
        "next_start",
        "policy",
        "probe_wait",
        "queue",
        "version",
        "where",
    )

    def __init__(
        self, key: str, policy: SlotPolicy, clock: Clock, throttle: AutoThrottle | None
    ) -> None:
        self.key = key
        self.policy = policy
        self.queue: list[tuple[int, int, T]] = []  # heap of (-priority, seq, item)
        self.in_flight = self.done = self.failed = 0
        self.delay = policy.delay  # before randomization and crawl-delay
        if throttle is not None and policy.throttle:
            self.delay = throttle.initial_delay(policy.delay)
        self.next_start = -math.inf  # no start before this (delay)
        self.backoff_until = -math.inf  # no start before this (429/503, Retry-After)
        self.backoff_level = 0  # back-offs in a row
        self.probe_wait = -math.inf  # no start before this (breaker probes all out)
        self.last_end = -math.inf  # when a download of this slot last finished
        self.bucket: TokenBucket | None = None
        if policy.rate is not None:
            self.bucket = TokenBucket(policy.rate, policy.burst, clock)
        self.breaker: CircuitBreaker | None = None
        if policy.breaker_threshold > 0:
            self.breaker = CircuitBreaker(
                policy.breaker_threshold, policy.breaker_pause, policy.breaker_probes, clock
            )
        self.version = 0  # of its one live heap entry
        self.where = 0  # which heap holds that entry (see SlotQueues)


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _check_seconds(name: str, value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (value >= 0 and math.isfinite(value))
    ):
        raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
