"""A project's rate limit: a token bucket on an injected clock.

The bucket fills at ``rate`` tokens per second up to ``burst``; each dispatched task
takes one token, and an empty bucket dispatches nothing. It starts full, so a project
may send ``burst`` tasks at once and then settles to ``rate``. Tokens are computed when
asked for, from the time elapsed, so an idle bucket costs nothing.

Rate and burst can change while the project runs (web UI, CLI, API): ``reconfigure``
keeps the tokens already earned, capped at the new burst, so lowering the rate takes
effect at once and raising it does not hand out a free burst.

``RateLimits`` is the one rule for what rate and burst a person may set (MAX_RATE,
MAX_BURST), for a project's scheduler and for a cluster job's dashboard alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skitter._clock import Clock, SystemClock
from skitter.exceptions import ConfigError

__all__ = ["RateLimits", "TokenBucket", "default_burst"]

# Waiting exactly ``wait_time()`` must be enough, whatever the float rounding.
_EPSILON = 1e-9
_SYSTEM_CLOCK = SystemClock()


def default_burst(rate: float) -> float:
    """Ten seconds' worth of tokens, and at least one, so that a slow rate
    (0.05/s) can still dispatch."""
    return max(10.0 * rate, 1.0) if rate > 0 else 0.0


@dataclass(frozen=True, slots=True)
class RateLimits:
    """MAX_RATE and MAX_BURST: the highest rate and burst that may be set, also while
    the crawl runs (None: no cap). ``rate_of`` and ``burst_of`` say whose limits they
    are in a refusal (" of worker w1": a cluster job is capped by its lowest worker's)."""

    max_rate: float | None = None
    max_burst: float | None = None
    rate_of: str = ""
    burst_of: str = ""

    def check(self, rate: float | None, burst: float | None) -> float | None:
        """The burst to set with ``rate`` (see ``burst_for``; None with an unlimited
        rate). A rate or burst that is negative or not finite, above MAX_RATE or
        MAX_BURST, or an unlimited rate under a MAX_RATE, is a ConfigError saying so."""
        if rate is None:
            if self.max_rate is not None:
                raise ConfigError(
                    f"an unlimited rate is above MAX_RATE ({self.max_rate:g}/s){self.rate_of}"
                )
            return None
        if not (_finite(rate) and (burst is None or _finite(burst))):
            raise ConfigError(f"rate and burst must be >= 0, got {rate!r} and {burst!r}")
        if self.max_rate is not None and rate > self.max_rate:
            raise ConfigError(
                f"rate {rate:g}/s is above MAX_RATE ({self.max_rate:g}/s){self.rate_of}"
            )
        if self.max_burst is not None and burst is not None and burst > self.max_burst:
            raise ConfigError(
                f"burst {burst:g} is above MAX_BURST ({self.max_burst:g}){self.burst_of}"
            )
        return self.burst_for(rate, burst)

    def burst_for(self, rate: float, burst: float | None) -> float:
        """The burst a bucket of ``rate`` gets: ``burst``, else the default (10 x rate)
        capped at MAX_BURST, so that leaving the burst out never breaks the cap."""
        if burst is not None:
            return burst
        default = default_burst(rate)
        return default if self.max_burst is None else min(default, self.max_burst)


def _finite(value: float) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < math.inf


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` of them; ``rate=None`` is unlimited.

    ``burst`` defaults to ``10 x rate`` (at least one token). A rate of 0 dispatches
    nothing once the bucket is empty.
    """

    __slots__ = ("_burst", "_clock", "_rate", "_stamp", "_tokens")

    def __init__(
        self, rate: float | None, burst: float | None = None, clock: Clock = _SYSTEM_CLOCK
    ) -> None:
        self._clock = clock
        self._rate: float | None = None
        self._burst = math.inf
        self._tokens = math.inf
        self._stamp = clock.monotonic()
        self._configure(rate, burst)
        self._tokens = self._burst

    def _configure(self, rate: float | None, burst: float | None) -> None:
        if rate is None:
            self._rate, self._burst = None, math.inf
            return
        rate = _non_negative("rate", rate)
        self._rate = rate
        self._burst = default_burst(rate) if burst is None else _non_negative("burst", burst)

    def _refill(self) -> float:
        now = self._clock.monotonic()
        rate = self._rate
        if rate is not None and self._tokens < self._burst and now > self._stamp:
            self._tokens = min(self._burst, self._tokens + (now - self._stamp) * rate)
        self._stamp = now
        return self._tokens

    @property
    def rate(self) -> float | None:
        return self._rate

    @property
    def burst(self) -> float:
        return self._burst

    @property
    def tokens(self) -> float:
        """Tokens available now (``inf`` when unlimited)."""
        return self._refill()

    def holds(self, n: float = 1) -> bool:
        """Whether ``n`` tokens are there now: what ``try_take`` and ``wait_time`` decide
        by (to within float rounding), so a caller that asks first never waits 0 s for a
        token it would then be refused."""
        return self._refill() + _EPSILON >= n

    def try_take(self, n: float = 1) -> bool:
        """Take ``n`` tokens if the bucket holds them; never takes part of them."""
        if self.holds(n):
            self._tokens = max(0.0, self._tokens - n)
            return True
        return False

    def wait_time(self, n: float = 1) -> float:
        """Seconds until ``n`` tokens are available: 0 if they are now, ``inf`` if they
        never will be (more than the burst, or a rate of 0)."""
        missing = n - self._refill()
        if missing <= _EPSILON:
            return 0.0
        if n > self._burst or not self._rate:
            return math.inf
        return missing / self._rate

    def reconfigure(self, rate: float | None, burst: float | None = None) -> None:
        """Change rate and burst now, keeping the tokens earned so far (capped at the
        new burst). Going from unlimited to limited starts with a full bucket."""
        self._refill()
        was_unlimited = self._rate is None
        self._configure(rate, burst)
        if was_unlimited or self._rate is None:
            self._tokens = self._burst
        else:
            self._tokens = min(self._tokens, self._burst)

    def __repr__(self) -> str:
        if self._rate is None:
            return "TokenBucket(unlimited)"
        tokens = self.tokens
        return f"TokenBucket(rate={self._rate:g}/s, burst={self._burst:g}, tokens={tokens:.2f})"


def _non_negative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"token bucket {name} must be a number, got {value!r}")
    value = float(value)
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"token bucket {name} must be finite and >= 0, got {value!r}")
    return value
