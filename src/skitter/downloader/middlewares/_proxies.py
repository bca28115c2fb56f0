"""ProxyPool: which proxy a request goes through, and which proxies are down.

A sans-I/O core (time from an injected clock), used by ProxyPoolMiddleware:

- ``round_robin``: every proxy in turn, skipping those that are down;
- ``tiered``: PROXY_LIST is a list of tiers (cheapest first). Each host starts at tier
  0; an error or a block through a proxy moves the host one tier up, and after
  PROXY_TIER_FALLBACK successes in a row it tries the tier below again (the next
  failure there sends it back up). Within a tier, proxies take turns.

A connection error or timeout through a proxy marks it down for PROXY_BACKOFF seconds;
a down proxy is skipped while another one can be used. When every proxy is down, the
one that comes back first is used anyway: trying it is the only way to learn it is
back, and the request's own retries bound the cost.

A proxy URL carries credentials: it stays in ``Proxy.url`` for the transport only.
What is counted, logged or shown uses ``Proxy.label`` (its host and port, and its
position when two share them), and what is persisted uses ``Proxy.index``.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from skitter._clock import Clock
from skitter._components import load_object
from skitter._secrets import authority_problem, mask_url
from skitter.exceptions import ConfigError

__all__ = ["ROTATIONS", "Proxy", "ProxyPool", "check_rotation", "proxy_tiers", "proxy_urls"]

ROTATIONS = ("round_robin", "tiered")
_SCHEMES = ("http", "https")


@dataclasses.dataclass(slots=True, eq=False)
class Proxy:
    """One proxy of the pool, with its health and counts."""

    url: str = dataclasses.field(repr=False)
    label: str
    index: int
    tier: int
    #: Monotonic time before which the proxy is skipped (0: healthy).
    down_until: float = 0.0
    requests: int = 0
    failures: int = 0
    blocks: int = 0

    def up(self, now: float) -> bool:
        return self.down_until <= now

    def row(self, now: float) -> dict[str, Any]:
        """What the dashboard and the stats show of it: never its URL."""
        return {
            "proxy": self.label,
            "tier": self.tier,
            "state": "up" if self.up(now) else "down",
            "down_for": max(0.0, self.down_until - now),
            "requests": self.requests,
            "failures": self.failures,
            "blocks": self.blocks,
        }


@dataclasses.dataclass(slots=True)
class _HostTier:
    tier: int = 0
    streak: int = 0


class ProxyPool:
    """The proxies of one crawl, by tier."""

    def __init__(
        self,
        tiers: Sequence[Sequence[str]],
        clock: Clock,
        *,
        rotation: str = "round_robin",
        backoff: float = 60.0,
        fallback_after: int = 20,
    ) -> None:
        check_rotation(rotation)
        if backoff < 0:
            raise ConfigError(f"PROXY_BACKOFF must be >= 0, got {backoff!r}")
        if fallback_after < 1:
            raise ConfigError(f"PROXY_TIER_FALLBACK must be >= 1, got {fallback_after!r}")
        if rotation == "round_robin":  # one ring of every proxy, whatever the nesting
            tiers = [[url for tier in tiers for url in tier]]
        if not tiers or not all(tiers):
            raise ConfigError("PROXY_LIST has an empty tier, or no proxy at all")
        self._clock = clock
        self.rotation = rotation
        self.backoff = backoff
        self.fallback_after = fallback_after
        flat = [(t, url) for t, tier in enumerate(tiers) for url in tier]
        labels = _labels([url for _, url in flat])
        self.proxies: list[Proxy] = [
            Proxy(url, label, i, t)
            for i, ((t, url), label) in enumerate(zip(flat, labels, strict=True))
        ]
        self._tiers: list[list[Proxy]] = [
            [p for p in self.proxies if p.tier == t] for t in range(len(tiers))
        ]
        #: Per tier, where the next turn starts: after the proxy last chosen, so that a
        #: proxy that is down does not hand its turns to its neighbour.
        self._cursor: list[int] = [0] * len(self._tiers)
        self._hosts: dict[str, _HostTier] = {}

    @property
    def tiers(self) -> int:
        return len(self._tiers)

    def tier_of(self, host: str) -> int:
        state = self._hosts.get(host)
        return state.tier if state is not None else 0

    def pick(
        self, host: str, prefer: int | None = None, exclude: frozenset[int] = frozenset()
    ) -> Proxy | None:
        """The proxy for the next request to ``host``: ``prefer`` (a session's own, by
        index) while it is up and, when tiered, of the host's tier; else the next one
        up in the host's tier, then in the tiers above, then below; else the one back
        first. None when every proxy is in ``exclude`` (tried for this request)."""
        now = self._clock.monotonic()
        tier = self.tier_of(host)
        if prefer is not None and 0 <= prefer < len(self.proxies):
            own = self.proxies[prefer]
            if (
                own.index not in exclude
                and own.up(now)
                and (own.tier == tier or self.rotation == "round_robin")
            ):
                return own
        order: list[int] = [*range(tier, self.tiers), *range(tier - 1, -1, -1)]
        for t in order:
            ring = self._tiers[t]
            start = self._cursor[t]
            for k in range(len(ring)):
                at = (start + k) % len(ring)
                candidate = ring[at]
                if candidate.index not in exclude and candidate.up(now):
                    self._cursor[t] = at + 1
                    return candidate
        left = [p for p in self.proxies if p.index not in exclude]
        if not left:
            return None
        soonest: Proxy = min(left, key=_down_until)
        return soonest

    def sent(self, proxy: Proxy) -> None:
        proxy.requests += 1

    def failed(self, proxy: Proxy, host: str) -> None:
        """A connection error or timeout through ``proxy``: down for the back-off."""
        proxy.failures += 1
        proxy.down_until = self._clock.monotonic() + self.backoff
        self._escalate(proxy, host)

    def blocked(self, proxy: Proxy, host: str) -> None:
        """``host`` refused the crawler through ``proxy`` (the proxy itself works)."""
        proxy.blocks += 1
        self._escalate(proxy, host)

    def succeeded(self, proxy: Proxy, host: str) -> None:
        if self.rotation != "tiered":
            return
        state = self._hosts.setdefault(host, _HostTier())
        if proxy.tier != state.tier:
            return
        state.streak += 1
        if state.streak >= self.fallback_after and state.tier > 0:
            state.tier -= 1
            state.streak = 0

    def _escalate(self, proxy: Proxy, host: str) -> None:
        if self.rotation != "tiered":
            return
        state = self._hosts.setdefault(host, _HostTier())
        state.streak = 0
        if proxy.tier >= state.tier:  # a failure below the host's tier says nothing new
            state.tier = min(proxy.tier + 1, self.tiers - 1)

    def rows(self) -> list[dict[str, Any]]:
        now = self._clock.monotonic()
        return [p.row(now) for p in self.proxies]


def check_rotation(rotation: str) -> str:
    """PROXY_ROTATION, or ConfigError."""
    if rotation not in ROTATIONS:
        raise ConfigError(f"PROXY_ROTATION must be one of {', '.join(ROTATIONS)}, got {rotation!r}")
    return rotation


def _down_until(proxy: Proxy) -> float:
    return proxy.down_until


def proxy_tiers(value: Any, setting: str = "PROXY_LIST") -> list[list[str]]:
    """PROXY_LIST (or ``setting``, which takes the same) as tiers of checked proxy URLs;
    ConfigError (at start) for anything else. A flat list is one tier; a string is URLs
    separated by commas, a file (one URL a line, ``#`` comments) or a dotted path to a
    callable returning a list."""
    if isinstance(value, str):
        if "://" in value:  # from the command line or the environment: URLs, comma-separated
            value = [url for url in re.split(r"[\s,]+", value) if url]
        else:
            value = _from_file_or_callable(value, setting)
    elif callable(value):
        value = value()
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(f"{setting} must be a non-empty list of proxy URLs, got {_shown(value)}")
    if all(isinstance(v, str) for v in value):
        tiers = [list(value)]
    elif all(isinstance(v, list | tuple) for v in value):
        tiers = [list(v) for v in value]
    else:
        raise ConfigError(f"{setting} must be a list of proxy URLs or a list of lists (tiers)")
    for tier in tiers:
        for url in tier:
            _check(url, setting)
    return tiers


def proxy_urls(settings: Mapping[str, Any], setting: str) -> list[str]:
    """The proxy URLs a setting that takes what PROXY_LIST takes gives, tiers flattened;
    none for None."""
    value = settings[setting]
    if value is None:
        return []
    return [url for tier in proxy_tiers(value, setting) for url in tier]


def _from_file_or_callable(value: str, setting: str) -> Any:
    """A file's lines, or what a callable returns (the string names one or the other)."""
    path = Path(value).expanduser()
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{setting}: cannot read {path}: {exc}") from None
        lines = [line.strip() for line in text.splitlines()]
        return [line for line in lines if line and not line.startswith("#")]
    if "/" in value or "." not in value.strip("."):
        raise ConfigError(f"{setting}: no such file {value!r}")
    factory: Callable[[], Any] = load_object(value)
    if not callable(factory):
        raise ConfigError(f"{setting}: {value!r} is not a file nor a callable")
    return factory()


def _check(url: Any, setting: str) -> None:
    if not isinstance(url, str):
        raise ConfigError(f"{setting}: a proxy is a URL string, not {_shown(url)}")
    problem = authority_problem(url)
    if problem is not None:  # checked first: urlsplit's own errors quote the password
        raise ConfigError(f"{setting}: {mask_url(url)!r}: {problem}")
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018  # raises for a port out of range
    except ValueError as exc:
        raise ConfigError(f"{setting}: {mask_url(url)!r} is not a proxy URL ({exc})") from None
    if parts.scheme.lower() not in _SCHEMES or not parts.hostname:
        raise ConfigError(
            f"{setting}: {mask_url(url)!r} is not an http:// or https:// proxy URL with a host"
        )


def _labels(urls: list[str]) -> list[str]:
    """``host:port`` of each proxy, with ``#index`` where two would read the same."""
    bare = []
    for url in urls:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        bare.append(f"{parts.hostname}:{port}")
    counts = collections.Counter(bare)
    return [b if counts[b] == 1 else f"{b}#{i}" for i, b in enumerate(bare)]


def _shown(value: Any) -> str:
    return mask_url(value) if isinstance(value, str) else type(value).__name__
