"""Redis's errors as skitter's, for every Redis frontier call (``_frontier``, ``_listing``).

The engine rides out ``FrontierUnavailable`` (Redis restarting, the network down); a
job whose state is gone from Redis is ``JobStateLost``, a ``FatalError``: the crawl
fails rather than going on from nothing; what a script refuses as asked (another queue
kind, another Bloom filter) is ``ConfigError``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from redis import exceptions as redis_errors
from redis.exceptions import ResponseError

from skitter.exceptions import ConfigError, FrontierUnavailable, JobStateLost

__all__ = ["lost_error", "translated"]

_DOWN = (redis_errors.ConnectionError, redis_errors.TimeoutError, redis_errors.BusyLoadingError)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


class _Job(Protocol):
    project: str
    job: str

    def state_lost(self, what: str) -> str: ...


def lost_error(job: _Job, reply: str) -> JobStateLost | None:
    """The ``JobStateLost`` a script's "skitter-lost: ..." error reply means, or None."""
    if "skitter-lost: no epoch" in reply:
        return JobStateLost(job.state_lost("has no epoch"))
    if "skitter-lost:" in reply:
        return JobStateLost(job.state_lost("has a new epoch"))
    return None


def translated(method: F) -> F:
    """Report Redis being out of reach as ``FrontierUnavailable``, a job whose state is
    gone as ``JobStateLost``, a script's refusal of what the caller asked as
    ``ConfigError``."""

    @functools.wraps(method)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except _DOWN as exc:
            raise FrontierUnavailable(f"Redis for {self.project}/{self.job}: {exc}") from exc
        except ResponseError as exc:
            text = str(exc)
            lost = lost_error(self, text)
            if lost is not None:
                raise lost from None
            if "skitter:" in text:
                raise ConfigError(f"{self!r}: {text}") from None
            raise

    return wrapper  # type: ignore[return-value]


def reason_kind(reason: str) -> str:
    """What a quarantine reason is about, without the details (for logging it once)."""
    return reason.split(" (", 1)[0].split(":", 1)[0]
