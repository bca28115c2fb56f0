"""Reading a ``Retry-After`` header (RFC 9110 §10.2.3).

The header is either a number of seconds or an HTTP-date. It is parsed apart from the
retry middleware so the scheduler and the slots can reuse it, and it takes ``now``
instead of reading the clock so that it is a pure function.
"""

from __future__ import annotations

import math
from datetime import UTC
from email.utils import parsedate_to_datetime

__all__ = ["parse_retry_after"]


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from ``now`` (epoch seconds), or None when absent or unreadable.

    A date in the past gives ``0.0``; so does a negative number of seconds, which no
    server should send but which is no reason to ignore the header's intent.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text[0].isdigit() or text[0] in "+-.":
        try:
            seconds = float(text)
        except ValueError:
            return None
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000" means "UTC, source unknown" (RFC 5322)
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)
