"""What a Redis error means for the crawl, decided in one place.

Everything that talks to Redis (the frontier, the cluster's politeness gates and start
claim, stats, presence, the dashboard's source, ``skitter push``) sends its errors
through here, so that one state of Redis means one thing everywhere:

- **unavailable for now** -> ``FrontierUnavailable``: the engine pauses dispatch, backs
  off, tries again, and fails the crawl with ``FrontierOutage`` once it has lasted
  FRONTIER_OUTAGE_TIMEOUT. A connection refused, broken or timed out; ``LOADING``
  (restarted, loading its dataset); ``OOM`` (maxmemory reached under ``noeviction``);
  ``MISCONF`` (it cannot persist, so it refuses writes); ``READONLY`` (a replica: a
  failover, or a URL naming one); ``MASTERDOWN``, ``TRYAGAIN``, ``CLUSTERDOWN``. Each
  of these ends by itself or by an operator's hand, and nothing is lost meanwhile: a
  task whose children or ack could not be written is left to its lease, never failed.
- **refused** -> ``FatalError`` (``check_access`` makes it a ``ConfigError`` at start):
  the credentials (``WRONGPASS``, ``NOAUTH``, a password the server does not want) or
  the ACL user's rights (``NOPERM``). Waiting cannot help, so it is never "unavailable".
- **the job's state is gone** -> ``JobStateLost`` (a ``FatalError``): a frontier script
  found the job without its epoch, or with another one (Redis restarted without
  persistence, flushed, evicted, failed over to an empty replica);
- **refused as asked** -> ``ConfigError``: a script's "skitter: ..." reply (another queue
  kind, another Bloom filter than the job's);
- anything else (``WRONGTYPE`` from junk written to a job's key, a script bug) is not
  translated: it propagates as redis-py's own exception.

On a Redis Cluster, redis-py raises ``RedisClusterException`` (no ``RedisError``) when
no node answers ("cannot be connected") or a slot has no master (``SlotNotCoveredError``):
both are "unavailable for now" too, but for nodes that refused the credentials (the same
exception, the refusal in its message); ``REDIS_ERRORS`` is what every ``except`` catches.

redis-py raises a class per error code for most of these (``OutOfMemoryError``,
``ReadOnlyError``, ``BusyLoadingError``, ``AuthenticationError``, ``NoPermissionError``)
but a plain ``ResponseError`` for others (``MISCONF ...``); both are recognised. Its
messages name host and port, not the password; they are masked all the same.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from redis import exceptions as redis_errors

from skitter._secrets import mask_text, mask_url
from skitter.exceptions import (
    ConfigError,
    FatalError,
    FrontierUnavailable,
    JobStateLost,
    SkitterError,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "REDIS_ERRORS",
    "check_access",
    "classify",
    "lost_error",
    "reason_kind",
    "redis_errors_translated",
    "translate",
    "translated",
    "translating",
]

Kind = Literal["unavailable", "refused"]

#: Error codes (the reply's first word) and what they mean, for the message.
_UNAVAILABLE = {
    "OOM": "out of memory: maxmemory reached with eviction off",
    "MISCONF": "refusing writes: it cannot persist to disk",
    "READONLY": "a read-only replica",
    "LOADING": "loading its dataset",
    "MASTERDOWN": "a replica whose master is down",
    "TRYAGAIN": "busy resharding",
    "CLUSTERDOWN": "a cluster that is down",
    "NOREPLICAS": "short of replicas: a write did not reach them in time",
}
_REFUSED = {
    "WRONGPASS": "refused the credentials",
    "NOAUTH": "refused the connection: it needs credentials",
    "NOPERM": "refused access: the ACL user lacks the rights",
}
_CLASS_CODES: tuple[tuple[type[BaseException], str], ...] = (
    (redis_errors.NoPermissionError, "NOPERM"),
    (redis_errors.AuthorizationError, "NOPERM"),
    (redis_errors.AuthenticationError, "WRONGPASS"),
    (redis_errors.OutOfMemoryError, "OOM"),
    (redis_errors.ReadOnlyError, "READONLY"),
    (redis_errors.BusyLoadingError, "LOADING"),
)


#: What redis-py raises: ``RedisError``, and the cluster client's own exception.
REDIS_ERRORS: tuple[type[Exception], ...] = (
    redis_errors.RedisError,
    redis_errors.RedisClusterException,
)
_ACCESS_ERRORS: tuple[type[Exception], ...] = (*REDIS_ERRORS, FatalError)


def _cluster_error(exc: BaseException) -> tuple[Kind, str] | None:
    """What the cluster client's own exception means: no node answered (or a slot has
    no master: one is down) is "unavailable", unless the nodes refused the credentials
    (redis-py words that "cannot be connected" too, with the refusal after it)."""
    if isinstance(exc, redis_errors.SlotNotCoveredError):
        return "unavailable", "has a slot no master serves (CLUSTERDOWN)"
    text = str(exc)
    if not isinstance(exc, redis_errors.RedisClusterException) or "cannot be connected" not in text:
        return None
    lowered = text.lower()
    if "username-password" in lowered or "wrongpass" in lowered:
        return "refused", f"{_REFUSED['WRONGPASS']} (WRONGPASS)"
    if "noauth" in lowered or "authentication required" in lowered:
        return "refused", f"{_REFUSED['NOAUTH']} (NOAUTH)"
    if "noperm" in lowered:
        return "refused", f"{_REFUSED['NOPERM']} (NOPERM)"
    return "unavailable", "cannot be reached"


def _code(exc: BaseException) -> str | None:
    """The Redis error code of ``exc``: from its message (also inside redis-py's
    "Command # 1 (...) of pipeline caused error: ..."), its class, or its
    ``status_code``; None for a connection or timeout error (which has none)."""
    text = str(exc)
    _, wrapped, inner = text.partition(" of pipeline caused error: ")
    if wrapped:
        text = inner.lstrip("('\"")
    first = text.split(" ", 1)[0]
    if first in _UNAVAILABLE or first in _REFUSED:
        return first
    status = getattr(exc, "status_code", None)
    if isinstance(status, str) and (status in _UNAVAILABLE or status in _REFUSED):
        return status
    for cls, code in _CLASS_CODES:
        if isinstance(exc, cls):
            if code == "WRONGPASS" and "authenticat" in str(exc).lower():
                return "NOAUTH"  # "Authentication required", "must be authenticated"
            return code
    return None


def classify(exc: BaseException) -> tuple[Kind, str] | None:
    """``("unavailable" | "refused", what it means)`` for a Redis error that means one of
    those, else None (the error is not this module's to translate)."""
    cluster = _cluster_error(exc)
    if cluster is not None:
        return cluster
    if not isinstance(exc, redis_errors.RedisError):
        return None
    code = _code(exc)
    if code in _REFUSED:
        return "refused", f"{_REFUSED[code]} ({code})"
    if code in _UNAVAILABLE:
        return "unavailable", f"is {_UNAVAILABLE[code]} ({code})"
    if isinstance(exc, redis_errors.ConnectionError | redis_errors.TimeoutError):
        return "unavailable", "cannot be reached"
    return None


def translate(exc: BaseException, where: str) -> SkitterError | None:
    """The skitter error for ``exc`` (see the module docstring), or None. ``where`` names
    the Redis in the message: "Redis for shop/nightly", "Redis at redis://host:6379/0"
    (masked by the caller)."""
    found = classify(exc)
    if found is None:
        return None
    kind, meaning = found
    detail = mask_text(str(exc) or type(exc).__name__)
    if kind == "refused":
        return FatalError(f"{where} {meaning}: {detail}")
    return FrontierUnavailable(f"{where} {meaning}: {detail}")


@contextlib.contextmanager
def redis_errors_translated(where: str) -> Iterator[None]:
    """Raise the skitter error for a Redis error that has one (see ``translate``)."""
    try:
        yield
    except REDIS_ERRORS as exc:
        error = translate(exc, where)
        if error is None:
            raise
        raise error from exc


F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def translating(where: Callable[[Any], str]) -> Callable[[F], F]:
    """The same for an async method; ``where(self)`` names the Redis (called only on an
    error, so it costs nothing on the hot path)."""

    def decorate(method: F) -> F:
        @functools.wraps(method)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await method(self, *args, **kwargs)
            except REDIS_ERRORS as exc:
                error = translate(exc, where(self))
                if error is None:
                    raise
                raise error from exc

        return wrapper  # type: ignore[return-value]

    return decorate


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
    """For the frontier's methods: a job whose state is gone is ``JobStateLost``, a
    script's refusal of what the caller asked a ``ConfigError``, and every other error
    as ``translate`` says."""

    @functools.wraps(method)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except REDIS_ERRORS as exc:
            if isinstance(exc, redis_errors.ResponseError):
                text = str(exc)
                lost = lost_error(self, text)
                if lost is not None:
                    raise lost from None
                if "skitter:" in text:
                    raise ConfigError(f"{self!r}: {text}") from None
            error = translate(exc, f"Redis for {self.project}/{self.job}")
            if error is None:
                raise
            raise error from exc

    return wrapper  # type: ignore[return-value]


def reason_kind(reason: str) -> str:
    """What a quarantine reason is about, without the details (for logging it once)."""
    return reason.split(" (", 1)[0].split(":", 1)[0]


async def check_access(
    client: Redis, url: str, probe: Callable[[], Awaitable[Any]] | None = None
) -> None:
    """At start: credentials or rights that Redis refuses are a ``ConfigError`` naming
    the (masked) URL: the one-line message a command prints, before anything runs.
    ``probe`` (reading and writing the keys the caller will use, through
    ``translating`` or not) finds an ACL user that may connect but not touch them.
    Redis out of reach is no error here: a worker waits for it as for any outage."""
    where = f"Redis at {mask_url(url)}"
    check_sentinels = getattr(client, "check_sentinels", None)  # behind Sentinel
    if check_sentinels is not None:
        await check_sentinels()
    try:
        await client.ping()
        if probe is not None:
            await probe()
    except FrontierUnavailable:
        return
    except _ACCESS_ERRORS as exc:
        cause = exc.__cause__ if isinstance(exc, FatalError) else exc
        found = classify(cause) if cause is not None else None
        if cause is None or found is None:
            raise
        if found[0] == "refused":
            raise ConfigError(str(translate(cause, where))) from None
