"""AutoThrottle: a slot's download delay adjusted from observed latency.

Scrapy's algorithm, unchanged, so its users' tuning carries over. The idea: if a server
needs ``latency`` seconds to answer, sending one request every ``latency / N`` seconds
keeps ``N`` requests in flight at it on average (N = AUTOTHROTTLE_TARGET_CONCURRENCY).
After each download::

    target    = latency / target_concurrency
    new delay = max(target, (old delay + target) / 2)   # move halfway, but rise at once
    new delay = bounded to [min delay, AUTOTHROTTLE_MAX_DELAY]

A slot starts at ``max(min delay, AUTOTHROTTLE_START_DELAY)``. A response other than 200
(or no response at all) never *lowers* the delay: error pages tend to be fast, and
speeding up because a server has started failing is the opposite of polite.

One difference from Scrapy's code, in line with Scrapy's documentation ("never sets a
delay lower than DOWNLOAD_DELAY"): the minimum delay (the slot's configured delay) wins
over AUTOTHROTTLE_MAX_DELAY when the two conflict, since the configured delay is an
explicit promise to the site.

This is a pure policy: ``SlotQueues`` (the scheduler) owns the per-slot delays and
calls ``next_delay`` when a download of a throttled slot finishes; Scrapy's extension
API (``skitter.extensions.throttle``) applies the same policy to an engine's slots.
"""

from __future__ import annotations

import math

from skitter.exceptions import ConfigError
from skitter.settings import PolitenessSettings, Settings

__all__ = ["AutoThrottle"]


class AutoThrottle:
    """Scrapy's AutoThrottle delay policy (AUTOTHROTTLE_* settings)."""

    __slots__ = ("debug", "max_delay", "start_delay", "target_concurrency")

    def __init__(
        self,
        start_delay: float = 5.0,
        max_delay: float = 60.0,
        target_concurrency: float = 1.0,
        *,
        debug: bool = False,
    ) -> None:
        self.start_delay = _seconds("AUTOTHROTTLE_START_DELAY", start_delay)
        self.max_delay = _seconds("AUTOTHROTTLE_MAX_DELAY", max_delay)
        if isinstance(target_concurrency, bool) or not (
            isinstance(target_concurrency, int | float) and 0 < target_concurrency < math.inf
        ):
            raise ConfigError(
                "AUTOTHROTTLE_TARGET_CONCURRENCY must be a finite number above 0, "
                f"got {target_concurrency!r}"
            )
        self.target_concurrency = float(target_concurrency)
        #: Log every adjustment (AUTOTHROTTLE_DEBUG); read by the caller that logs.
        self.debug = debug

    @classmethod
    def from_settings(cls, settings: Settings) -> AutoThrottle | None:
        """The throttle AUTOTHROTTLE_ENABLED asks for, or None when it is off."""
        own = settings.view(PolitenessSettings)
        if not own.autothrottle_enabled:
            return None
        return cls(
            own.autothrottle_start_delay,
            own.autothrottle_max_delay,
            own.autothrottle_target_concurrency,
            debug=own.autothrottle_debug,
        )

    def initial_delay(self, min_delay: float) -> float:
        """The delay of a new slot whose configured delay is ``min_delay``."""
        return max(min_delay, self.start_delay)

    def next_delay(
        self, delay: float, latency: float, status: int | None, *, min_delay: float
    ) -> float:
        """The slot's delay after a download that took ``latency`` seconds.

        ``status`` is the response status, or None when the download failed without a
        response (a timeout, a reset): then, as for any status but 200, the delay may
        rise but never fall. A latency that is not a finite number >= 0 changes nothing.
        """
        if not (latency >= 0 and math.isfinite(latency)):
            return delay
        target = latency / self.target_concurrency
        new = max(target, (delay + target) / 2.0)
        new = max(min_delay, min(new, self.max_delay))
        if status != 200 and new <= delay:
            return delay
        return new

    def __repr__(self) -> str:
        return (
            f"AutoThrottle(start_delay={self.start_delay:g}, max_delay={self.max_delay:g}, "
            f"target_concurrency={self.target_concurrency:g})"
        )


def _seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number of seconds, got {value!r}")
    if not (value >= 0 and math.isfinite(value)):
        raise ConfigError(f"{name} must be finite and >= 0, got {value!r}")
    return float(value)
