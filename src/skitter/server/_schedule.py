"""Schedules: runs started by the clock, by cron expression or every N seconds.

A ``Schedule`` names a spider of a deployed project, its arguments and settings, and
when: ``cron`` (UTC, see ``_cron``) or ``every`` seconds. Its policies, stated:

- **one at a time**: while a run it started is pending or running, a firing is skipped
  (counted in ``skipped``), unless ``overlap`` is set;
- **missed runs** (the service was down, or the machine asleep, when it was due): a
  firing found more than ``MISSED_AFTER`` seconds late is *missed*; ``missed="skip"``
  (the default) drops it and waits for the next time, ``missed="once"`` runs once now
  however many were missed. Never more than one catch-up run.

Schedules are kept in ``schedules.json`` (written whole, atomically). Their settings
must not be secrets, which would then sit in that file: a secret belongs in the
project's settings or the service's environment, and is refused here with that said.
The ``Scheduler`` sleeps on the event loop until the next due time, so on a virtual-time
loop a day of schedules passes in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from skitter._clock import Clock
from skitter._secrets import is_secret_name
from skitter._tasks import Background
from skitter.exceptions import ConfigError
from skitter.server._cron import Cron
from skitter.server._deploy import check_name
from skitter.server._store import Run

__all__ = ["MISSED_AFTER", "Schedule", "ScheduleBook", "Scheduler", "Starter"]

log = logging.getLogger("skitter.server")

#: Seconds late after which a firing counts as missed rather than merely late.
MISSED_AFTER = 60.0
_MISSED = ("skip", "once")


@dataclass(slots=True)
class Schedule:
    name: str
    project: str
    spider: str
    cron: str | None = None
    every: float | None = None
    args: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    overlap: bool = False
    missed: str = "skip"
    enabled: bool = True
    next_at: float | None = None
    last_at: float | None = None
    last_job: str | None = None
    last_error: str | None = None
    fired: int = 0
    skipped: int = 0

    def check(self) -> None:
        check_name("schedule", self.name)
        if (self.cron is None) == (self.every is None):
            raise ConfigError(f"schedule {self.name!r}: give either cron or every, not both")
        if self.cron is not None:
            Cron.parse(self.cron)
        if self.every is not None and not self.every >= 1:
            raise ConfigError(f"schedule {self.name!r}: every must be at least 1 second")
        if self.missed not in _MISSED:
            raise ConfigError(f"schedule {self.name!r}: missed must be one of {_MISSED}")
        secret = sorted(name for name in self.settings if is_secret_name(name))
        if secret:
            raise ConfigError(
                f"schedule {self.name!r}: {', '.join(secret)} would be stored in clear; put "
                "secrets in the project's settings or the service's environment"
            )

    def following(self, after: float) -> float:
        """The first due time after ``after``."""
        if self.cron is not None:
            return Cron.parse(self.cron).next_after(after)
        assert self.every is not None
        return after + self.every


class ScheduleBook:
    """The schedules in ``path``, by name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._items: dict[str, Schedule] = {}
        if path.exists():
            for data in orjson.loads(path.read_bytes()):
                self._items[data["name"]] = Schedule(**data)

    def __iter__(self) -> Any:
        return iter(sorted(self._items.values(), key=lambda s: s.name))

    def get(self, name: str) -> Schedule | None:
        return self._items.get(name)

    def put(self, schedule: Schedule) -> None:
        schedule.check()
        self._items[schedule.name] = schedule
        self.save()

    def remove(self, name: str) -> None:
        if self._items.pop(name, None) is None:
            raise LookupError(f"no schedule named {name!r}")
        self.save()

    def save(self) -> None:
        data = orjson.dumps([asdict(s) for s in self], option=orjson.OPT_INDENT_2)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, self.path)


class Starter(Protocol):
    """What a scheduler starts runs with (the service's ``Launcher``)."""

    def schedule(
        self,
        project: str,
        spider: str,
        *,
        args: dict[str, str] | None = None,
        settings: dict[str, str] | None = None,
        schedule: str | None = None,
    ) -> Run: ...

    def is_active(self, predicate: Any) -> bool: ...


class Scheduler:
    """Fires the schedules of ``book`` on ``clock`` (its ``time()``, epoch seconds)."""

    def __init__(self, book: ScheduleBook, starter: Starter, clock: Clock) -> None:
        self.book = book
        self.starter = starter
        self.clock = clock
        self._wake = asyncio.Event()
        self._task = Background("skitter-schedules")

    def start(self) -> None:
        self._task.start(self._run())

    async def stop(self) -> None:
        await self._task.stop()

    def put(self, schedule: Schedule) -> None:
        """Add or replace a schedule; it is due first at its next time from now. One
        with neither cron nor every (or both) is a ConfigError, before its time is asked."""
        schedule.check()
        schedule.next_at = schedule.following(self.clock.time()) if schedule.enabled else None
        self.book.put(schedule)
        self._wake.set()

    def remove(self, name: str) -> None:
        self.book.remove(name)
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self.tick()
            due = [s.next_at for s in self.book if s.enabled and s.next_at is not None]
            self._wake.clear()
            timeout = max(0.0, min(due) - self.clock.time()) if due else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    def tick(self) -> None:
        """Fire what is due now, by each schedule's policies."""
        now = self.clock.time()
        changed = False
        for schedule in self.book:
            if not schedule.enabled or schedule.next_at is None or schedule.next_at > now:
                continue
            late = now - schedule.next_at > MISSED_AFTER
            if not late or schedule.missed == "once":
                self._fire(schedule, now)
            else:
                log.info(
                    "Schedule %s: missed its run at %s; skipped", schedule.name, schedule.next_at
                )
            schedule.next_at = schedule.following(now)
            changed = True
        if changed:
            self.book.save()

    def _fire(self, schedule: Schedule, now: float) -> None:
        if not schedule.overlap and self.starter.is_active(
            lambda run: run.schedule == schedule.name
        ):
            schedule.skipped += 1
            log.info("Schedule %s: its last run is still going; this one is skipped", schedule.name)
            return
        try:
            run = self.starter.schedule(
                schedule.project,
                schedule.spider,
                args=schedule.args,
                settings=schedule.settings,
                schedule=schedule.name,
            )
        except (LookupError, ConfigError) as exc:
            schedule.last_error = str(exc.args[0] if exc.args else exc)
            log.error("Schedule %s could not start a run: %s", schedule.name, schedule.last_error)
            return
        schedule.fired += 1
        schedule.last_at, schedule.last_job, schedule.last_error = now, run.job, None
