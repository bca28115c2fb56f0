"""When a failed task is tried again: pyspider's retry table, without I/O.

A failed attempt (a download error, a timeout, a retryable status) is retried while
``retried < retries``; the next attempt waits the table's delay for the attempt number,
or longer when the server's ``Retry-After`` asks for it. Once retries run out the task is
FAILED, which ``next_attempt`` says by returning None.

Two tables ship: ``SERVICE_RETRY_DELAYS`` is pyspider's, made for a long-running service
that revisits sites for days (30 s, 1 h, 6 h, 12 h, then daily); ``CRAWL_RETRY_DELAYS``
is in seconds, for a batch crawl that should end today. A spider overrides either with
a ``retry_delay`` class attribute in either form::

    retry_delay = {0: 10, 1: 60, "": 600}   # pyspider's form: '' = every later attempt
    retry_delay = [1, 5, 30]                # a sequence: the last delay repeats
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

__all__ = [
    "CRAWL_RETRY_DELAYS",
    "RETRY_HTTP_CODES",
    "SERVICE_RETRY_DELAYS",
    "RetryPolicy",
]

#: pyspider's table: attempt number -> seconds; ``''`` is every later attempt.
SERVICE_RETRY_DELAYS: Mapping[int | str, float] = MappingProxyType(
    {0: 30, 1: 3600, 2: 21600, 3: 43200, "": 86400}
)
#: The batch-crawl default (the RETRY_DELAYS setting): short, so a crawl ends soon.
CRAWL_RETRY_DELAYS: tuple[float, ...] = (0.5, 2.0, 8.0)
#: Statuses that count as a failed attempt worth retrying (the RETRY_HTTP_CODES setting).
RETRY_HTTP_CODES: frozenset[int] = frozenset({408, 429, 500, 502, 503, 504, 522, 524})

RetryDelays = Mapping[int | str, float] | Sequence[float]


class RetryPolicy:
    """Turns "attempt ``retried`` failed at ``now``" into the time of the next attempt.

    ``delays`` is a pyspider mapping or a sequence of seconds (see the module docstring);
    ``retries`` is how many attempts may follow the first one, unless a request sets its
    own. Immutable after construction, so one policy can serve many projects.
    """

    __slots__ = ("_codes", "_later", "_table", "retries")

    def __init__(
        self,
        delays: RetryDelays = CRAWL_RETRY_DELAYS,
        retries: int = 3,
        *,
        retry_http_codes: Iterable[int] = RETRY_HTTP_CODES,
    ) -> None:
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        self._table, self._later = _read_table(delays)
        self.retries = retries
        self._codes = frozenset(int(code) for code in retry_http_codes)

    def delay(self, retried: int) -> float:
        """Seconds to wait after the failed attempt number ``retried`` (counting from 0)."""
        if retried < len(self._table):
            return self._table[retried]
        return self._later

    def gives_up(self, retried: int, retries: int | None = None) -> bool:
        """Whether a task that failed after ``retried`` earlier failures is FAILED now
        (``retries`` as in ``next_attempt``)."""
        return retried >= (self.retries if retries is None else retries)

    def next_attempt(
        self,
        retried: int,
        now: float,
        retries: int | None = None,
        retry_after: float | None = None,
    ) -> float | None:
        """The epoch time of the next attempt, or None when the task is FAILED.

        ``retried`` counts the failed attempts *before* this one, as ``Lease.retried``
        does; ``retries`` overrides the policy's (a request's own ``retries``);
        ``retry_after`` is a server's ``Retry-After`` in seconds, honoured when it asks
        for longer than the table.
        """
        if self.gives_up(retried, retries):
            return None
        wait = self.delay(retried)
        if retry_after is not None and retry_after > wait and math.isfinite(retry_after):
            wait = retry_after
        return now + wait

    def is_retryable_status(self, status: int) -> bool:
        """True for statuses that count as a failed, retryable attempt."""
        return status in self._codes

    @property
    def retry_http_codes(self) -> frozenset[int]:
        return self._codes

    def __repr__(self) -> str:
        table = ", ".join(f"{d:g}" for d in self._table)
        return f"RetryPolicy(delays=[{table}, then {self._later:g}], retries={self.retries})"


def _read_table(delays: RetryDelays) -> tuple[tuple[float, ...], float]:
    """Normalise either form to (delays of attempts 0..n-1, delay of every later one)."""
    if isinstance(delays, Mapping):
        return _read_mapping(delays)
    if isinstance(delays, str | bytes) or not isinstance(delays, Iterable):
        raise TypeError(f"retry delays must be a mapping or a sequence, got {delays!r}")
    seconds = tuple(_seconds(value, f"retry delay {i}") for i, value in enumerate(delays))
    if not seconds:
        raise ValueError("retry delays must not be empty")
    return seconds, seconds[-1]


def _read_mapping(delays: Mapping[int | str, float]) -> tuple[tuple[float, ...], float]:
    by_attempt: dict[int, float] = {}
    later: float | None = None
    for key, value in delays.items():
        if key == "":
            later = _seconds(value, "retry delay ''")
            continue
        try:
            # String keys come from JSON settings ({"0": 30}); bools are not attempt numbers.
            if isinstance(key, bool):
                raise ValueError
            attempt = int(key)
        except (TypeError, ValueError):
            raise ValueError(
                f"retry delay keys must be attempt numbers or '', got {key!r}"
            ) from None
        if attempt < 0:
            raise ValueError(f"retry delay keys must be >= 0, got {key!r}")
        by_attempt[attempt] = _seconds(value, f"retry delay {key!r}")
    if not by_attempt and later is None:
        raise ValueError("retry delays must not be empty")
    count = max(by_attempt, default=-1) + 1
    if later is None:
        later = by_attempt[count - 1]
    # A gap in the numbering ({0: 1, 2: 9}) takes the '' delay, as pyspider's lookup does.
    table = tuple(by_attempt.get(i, later) for i in range(count))
    return table, later


def _seconds(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not (seconds >= 0 and math.isfinite(seconds)):
        raise ValueError(f"{what} must be finite and >= 0, got {value!r}")
    return seconds
