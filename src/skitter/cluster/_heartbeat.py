"""A worker's heartbeat: what it publishes once a second for the cluster dashboard.

One ``Heartbeat`` per worker lives in the job's roster (``P:workers``, see
``_control``), written by the worker (``_presence``) and read by any number of
dashboards (``skitter dashboard --redis``), which may run another version of skitter.
It is a msgspec struct, written and read as one, so both sides name its fields the same
way and a field is never found by its position or guessed from a length:

- the beat itself is a JSON object: fields a newer worker adds are ignored by an older
  dashboard, and fields it lacks take their defaults;
- the tasks in flight and the latest outcomes (up to 50 and 20 a beat, rewritten every
  second) travel as JSON arrays of their fields, in the order declared here, to keep
  the beat small: new fields go at the end only (an older reader ignores the extra
  elements), and none is ever removed or reordered;
- a beat that does not decode (written by a person, say) is not a worker's: the
  roster skips it.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Heartbeat", "OutcomeBeat", "SlotBeat", "TaskBeat"]


class TaskBeat(msgspec.Struct, array_like=True, frozen=True):
    """A task a worker is downloading or processing now."""

    taskid: str
    url: str
    slot: str
    attempt: int  # 1 for the first try
    started: float  # epoch seconds


class OutcomeBeat(msgspec.Struct, array_like=True, frozen=True):
    """How one of the worker's latest tasks ended."""

    taskid: str
    url: str
    ok: bool
    status: int | None
    reason: str
    items: int
    at: float  # epoch seconds


class SlotBeat(msgspec.Struct, frozen=True):
    """One of the worker's busiest download slots (the fields of ``slot_stats()``)."""

    slot: str
    in_flight: int = 0
    queued: int = 0
    done: int = 0
    failed: int = 0
    concurrency: int = 0
    delay: float = 0.0
    breaker: str | None = None
    backoff: float = 0.0  # seconds left

    def row(self) -> dict[str, Any]:
        """The slot as ``slot_stats()`` lists it."""
        return msgspec.structs.asdict(self)


class Heartbeat(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker says of itself; times are epoch seconds by its own clock."""

    seen: float = 0.0
    started: float = 0.0
    interval: float = 1.0
    #: new, running, paused, checking, done or failed
    status: str = ""
    rate: float | None = None
    burst: float | None = None
    default_rate: float | None = None
    default_burst: float | None = None
    max_rate: float | None = None
    max_burst: float | None = None
    lease_seconds: float | None = None
    finish_reason: str | None = None
    #: Why the worker could not apply the job's control record (a newer worker's rule).
    control_error: str | None = None
    #: The control record's changes applied so far (a dashboard shows a change as made
    #: from when it is asked until every worker has it).
    rate_seq: int = 0
    pause_seq: int = 0
    #: This worker's tasks leased and waiting for a download slot, and in flight (all
    #: of them: ``active`` lists the oldest few).
    leased: int = 0
    in_flight: int = 0
    active: list[TaskBeat] = []
    recent: list[OutcomeBeat] = []
    failures: list[OutcomeBeat] = []
    slots: list[SlotBeat] = []

    def encode(self) -> bytes:
        return _ENCODER.encode(self)

    @classmethod
    def decode(cls, raw: bytes) -> Heartbeat | None:
        """The heartbeat in ``raw``, or None if it is not one."""
        try:
            return _DECODER.decode(raw)
        except msgspec.DecodeError:  # ValidationError too
            return None


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Heartbeat)
