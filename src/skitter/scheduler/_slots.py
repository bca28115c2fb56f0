"""Download slots: per-host politeness bookkeeping, without I/O (SPEC §3).

A slot is the key that groups requests for politeness: the host by default, or
``request.meta["download_slot"]``. Each slot allows ``concurrency`` downloads at once
and at least ``delay`` seconds (randomized 0.5x-1.5x, as Scrapy's
RANDOMIZE_DOWNLOAD_DELAY) between the starts of two downloads. A slot with nothing in
flight and nothing waiting is dropped, so a crawl over a million hosts keeps no
million idle records.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skitter.http import Request, url_host

__all__ = ["Slot", "SlotTable", "slot_key"]


def slot_key(request: Request) -> str:
    """The slot of ``request``: ``meta["download_slot"]`` or the URL's host."""
    meta = request.meta
    if meta:
        key = meta.get("download_slot")
        if key is not None:
            return str(key)
    return url_host(request.url)


@dataclass(slots=True)
class Slot:
    concurrency: int
    delay: float
    randomize: bool
    in_flight: int = 0
    next_start: float = 0.0  # monotonic time before which no download may start
    overrides: dict[str, Any] = field(default_factory=dict)

    def ready(self, now: float) -> bool:
        return self.in_flight < self.concurrency and now >= self.next_start

    def wait_time(self, now: float) -> float | None:
        """Seconds until this slot may start a download; None if only a finishing
        download can free it."""
        if self.in_flight >= self.concurrency:
            return None
        return max(0.0, self.next_start - now)

    def started(self, now: float, rng: random.Random) -> None:
        self.in_flight += 1
        if self.delay > 0:
            factor = rng.uniform(0.5, 1.5) if self.randomize else 1.0
            self.next_start = now + self.delay * factor


class SlotTable:
    """The live slots, created on first use from defaults and per-slot overrides."""

    __slots__ = ("_concurrency", "_delay", "_overrides", "_randomize", "_rng", "slots")

    def __init__(
        self,
        concurrency: int,
        delay: float = 0.0,
        randomize: bool = True,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        seed: int | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("slot concurrency must be at least 1")
        self._concurrency = concurrency
        self._delay = delay
        self._randomize = randomize
        self._overrides = {k.lower(): dict(v) for k, v in (overrides or {}).items()}
        self._rng = random.Random(seed)
        self.slots: dict[str, Slot] = {}

    def get(self, key: str) -> Slot:
        slot = self.slots.get(key)
        if slot is None:
            extra = self._overrides.get(key, {})
            slot = Slot(
                concurrency=int(extra.get("concurrency", self._concurrency)),
                delay=float(extra.get("delay", self._delay)),
                randomize=bool(extra.get("randomize_delay", self._randomize)),
            )
            self.slots[key] = slot
        return slot

    def start(self, key: str, now: float) -> None:
        self.get(key).started(now, self._rng)

    def finish(self, key: str, has_waiting: bool, now: float) -> None:
        """A download of ``key`` ended; drop the slot if it has nothing left to do."""
        slot = self.slots.get(key)
        if slot is None:
            return
        slot.in_flight -= 1
        if slot.in_flight <= 0 and not has_waiting and slot.next_start <= now:
            del self.slots[key]

    def sweep(self, now: float, waiting: Mapping[str, object]) -> int:
        """Drop idle slots whose delay has passed; returns how many were dropped."""
        idle = [
            key
            for key, slot in self.slots.items()
            if slot.in_flight <= 0 and slot.next_start <= now and key not in waiting
        ]
        for key in idle:
            del self.slots[key]
        return len(idle)
