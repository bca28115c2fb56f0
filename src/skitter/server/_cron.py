"""Cron expressions, as crontab(5) reads them, in UTC: when does a schedule fire next?

Five fields, ``minute hour day-of-month month day-of-week``, each ``*``, a number, a
range ``a-b``, a step ``*/n`` or ``a-b/n``, or a list of those joined by commas; day of
week 0-7 with 0 and 7 both Sunday; and the shorthands ``@hourly``, ``@daily``,
``@weekly``, ``@monthly``, ``@yearly``. When both day fields are restricted, a day that
matches either fires (as Vixie cron does). Month and day names are not read: refused
with the field quoted, never guessed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from skitter.exceptions import ConfigError

__all__ = ["Cron"]

_ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12),
           ("day of week", 0, 7))  # fmt: skip
#: How far ahead a match is looked for: "0 0 29 2 *" (29 February) fires within 8 years.
_HORIZON_DAYS = 8 * 366


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if span == "*":
                start, end = low, high
            elif "-" in span:
                first, _, last = span.partition("-")
                start, end = int(first), int(last)
            else:
                start = end = int(span)
                if step_text:
                    end = high
        except ValueError:
            raise ConfigError(f"cron {name} {text!r}: not a number, range or step") from None
        if step < 1 or not low <= start <= end <= high:
            raise ConfigError(f"cron {name} {text!r}: values must be within {low}-{high}")
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class Cron:
    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, expression: str) -> Cron:
        text = _ALIASES.get(expression.strip().lower(), expression)
        parts = text.split()
        if len(parts) != 5:
            raise ConfigError(
                f"cron {expression!r}: five fields (minute hour day month weekday) expected"
            )
        sets = [
            _field(p, name, low, high) for p, (name, low, high) in zip(parts, _FIELDS, strict=True)
        ]
        weekdays = frozenset(d % 7 for d in sets[4])
        minutes, hours, days, months = sets[:4]
        return cls(
            expression, minutes, hours, days, months, weekdays, parts[2] == "*", parts[4] == "*"
        )

    def _day_matches(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, epoch: float) -> float:
        """The first matching minute strictly after ``epoch`` (seconds, UTC)."""
        start = dt.datetime.fromtimestamp(epoch, dt.UTC).replace(second=0, microsecond=0)
        start += dt.timedelta(minutes=1)
        day = start.date()
        for _ in range(_HORIZON_DAYS):
            if self._day_matches(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        at = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=dt.UTC)
                        if at >= start:
                            return at.timestamp()
            day += dt.timedelta(days=1)
        raise ConfigError(f"cron {self.expression!r} never fires")
