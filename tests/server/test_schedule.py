"""Schedules on virtual time: a day of firings in milliseconds, exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skitter.exceptions import ConfigError
from skitter.server import Cron, Schedule, ScheduleBook, Scheduler
from skitter.server._store import Run
from skitter.testing import virtual_clock


class Recorder:
    """Starts nothing: records when each run was asked for; ``busy`` says whether the
    runs it started are still going (as the launcher's pending/running would)."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.started: list[tuple[float, str]] = []
        self.busy = False

    def schedule(self, project: str, spider: str, **kwargs: Any) -> Run:
        self.started.append((self.clock.time(), kwargs["schedule"]))
        return Run(job=f"job{len(self.started)}", project=project, spider=spider, version="1",
                   schedule=kwargs["schedule"])  # fmt: skip

    def is_active(self, predicate: Callable[[Run], bool]) -> bool:
        return self.busy and any(
            predicate(Run("j", "p", "s", "1", schedule=n)) for _, n in self.started
        )


def test_cron_next_times() -> None:
    t0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert Cron.parse("*/15 * * * *").next_after(t0) == 1_700_000_100.0  # 22:15
    assert Cron.parse("0 3 * * *").next_after(t0) == 1_700_017_200.0  # 03:00 next day
    assert Cron.parse("@hourly").next_after(t0) == 1_700_002_800.0  # 23:00
    # 29 February: the next one is in 2024.
    assert Cron.parse("0 0 29 2 *").next_after(t0) == 1_709_164_800.0
    # Both day fields restricted: either matches (the 1st, or a Monday).
    assert Cron.parse("0 0 1 * 1").next_after(t0) == 1_700_438_400.0  # Mon 20 Nov


@pytest.mark.parametrize("bad", ["* * * *", "61 * * * *", "0 0 * jan *", "*/0 * * * *"])
def test_bad_cron_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="cron"):
        Cron.parse(bad)


def test_a_secret_setting_is_refused(tmp_path: Path) -> None:
    book = ScheduleBook(tmp_path / "s.json")
    with pytest.raises(ConfigError, match="AWS_SECRET_ACCESS_KEY would be stored in clear"):
        book.put(Schedule("s", "p", "x", every=60, settings={"AWS_SECRET_ACCESS_KEY": "k"}))
    assert not (tmp_path / "s.json").exists()


@pytest.mark.virtual_time
async def test_an_interval_schedule_fires_twice(tmp_path: Path) -> None:
    clock = virtual_clock()
    recorder = Recorder(clock)
    scheduler = Scheduler(ScheduleBook(tmp_path / "s.json"), recorder, clock)
    start = clock.time()
    scheduler.put(Schedule("nightly", "shop", "products", every=3600))
    scheduler.start()
    await asyncio.sleep(2 * 3600 + 1)  # virtual
    await scheduler.stop()
    assert recorder.started == [
        (pytest.approx(start + 3600), "nightly"),
        (pytest.approx(start + 7200), "nightly"),
    ]
    assert ScheduleBook(tmp_path / "s.json").get("nightly").fired == 2  # type: ignore[union-attr]


@pytest.mark.virtual_time
async def test_a_cron_schedule_fires_on_its_minutes(tmp_path: Path) -> None:
    clock = virtual_clock()
    recorder = Recorder(clock)
    scheduler = Scheduler(ScheduleBook(tmp_path / "s.json"), recorder, clock)
    scheduler.put(Schedule("quarter", "shop", "products", cron="*/15 * * * *"))
    scheduler.start()
    await asyncio.sleep(3600)  # virtual
    await scheduler.stop()
    times = [at for at, _ in recorder.started]
    assert len(times) == 4
    assert all(at % 900 == 0 for at in times)


@pytest.mark.virtual_time
async def test_never_two_runs_of_one_schedule_at_once(tmp_path: Path) -> None:
    clock = virtual_clock()
    recorder = Recorder(clock)
    book = ScheduleBook(tmp_path / "s.json")
    scheduler = Scheduler(book, recorder, clock)
    scheduler.put(Schedule("long", "shop", "products", every=60))
    scheduler.start()
    await asyncio.sleep(61)  # virtual
    recorder.busy = True  # the first run is still going at the next two firings
    await asyncio.sleep(120)  # virtual
    recorder.busy = False
    await asyncio.sleep(60)  # virtual
    await scheduler.stop()
    assert len(recorder.started) == 2
    assert book.get("long").skipped == 2  # type: ignore[union-attr]


@pytest.mark.virtual_time
@pytest.mark.parametrize(("policy", "expected"), [("skip", 0), ("once", 1)])
async def test_missed_runs_after_downtime(tmp_path: Path, policy: str, expected: int) -> None:
    """The service was down through five firings: skip drops them, once runs one now."""
    clock = virtual_clock()
    path = tmp_path / "s.json"
    first = Scheduler(ScheduleBook(path), Recorder(clock), clock)
    first.put(Schedule("hourly", "shop", "products", every=3600, missed=policy))
    await asyncio.sleep(5 * 3600 + 600)  # nothing runs a scheduler meanwhile
    recorder = Recorder(clock)
    second = Scheduler(ScheduleBook(path), recorder, clock)
    second.start()
    await asyncio.sleep(1)  # virtual
    await second.stop()
    assert len(recorder.started) == expected
    after = ScheduleBook(path).get("hourly")
    assert after is not None and after.next_at == pytest.approx(clock.time() - 1 + 3600, abs=1)
