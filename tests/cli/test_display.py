"""The progress display and the stats table, rendered into recording rich consoles."""

from __future__ import annotations

import asyncio
import io
import logging
from datetime import datetime
from typing import Any

import pytest
from rich.console import Console

from skitter._clock import FakeClock
from skitter.cli._display import (
    ProgressDisplay,
    RateMeter,
    format_bytes,
    format_duration,
    format_logstats,
    format_stat,
    print_stats,
    render_progress,
    render_stats_table,
)


def recording_console(*, terminal: bool = False) -> Console:
    return Console(
        record=True, width=120, file=io.StringIO(), force_terminal=terminal, color_system=None
    )


def rendered(obj: Any) -> str:
    console = recording_console()
    console.print(obj)
    return console.export_text()


def test_stats_table_sorted_with_humanised_hints() -> None:
    stats = {
        "item_scraped_count": 300,
        "downloader/response_bytes": 12_345_678,
        "elapsed_time_seconds": 83.2,
        "finish_reason": "finished",
        "start_time": datetime(2024, 5, 1, 12, 0, 0).timestamp(),
        "[bold]markup[/bold]": 1,
    }
    text = rendered(render_stats_table(stats))
    lines = [line for line in text.splitlines() if "│" not in line and line.strip()]
    keys = [line.split()[0] for line in lines if line.split()[0] in stats]
    assert keys == sorted(stats)
    assert "12,345,678 (11.8 MiB)" in text
    assert "83.2 (1m 23s)" in text
    assert "2024-05-01 12:00:00" in text
    assert "[bold]markup[/bold]" in text  # keys are text, never markup
    # numbers are right-aligned: they all end in the same column
    number_ends = {
        len(line.rstrip())
        for line in lines
        if line.split()[0] in ("item_scraped_count", "elapsed_time_seconds")
    }
    assert len(number_ends) == 1


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("x/count", 1234567, "1,234,567"),
        ("flag", True, "True"),
        ("nothing", None, "None"),
        ("ratio", 0.123456, "0.1235"),
        ("big", 1234.5, "1,234.5"),
        ("nan", float("nan"), "nan"),
        ("short_seconds", 4.25, "4.25"),
        ("d/response_bytes", 512, "512"),
        ("when", datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        ("nested", {"a": [1, 2]}, "{'a': [1, 2]}"),
        ("weird", Unprintable(), "<unprintable Unprintable>"),
    ],
)
def test_format_stat_never_raises(key: str, value: Any, expected: str) -> None:
    assert format_stat(key, value).plain == expected


def test_print_stats_accepts_an_object_with_to_dict() -> None:
    class Stats:
        def to_dict(self) -> dict[str, Any]:
            return {"b": 2, "a": 1}

    console = recording_console()
    print_stats(Stats(), console)  # type: ignore[arg-type]
    text = console.export_text()
    assert text.index(" a ") < text.index(" b ")


def test_humanisers() -> None:
    assert format_bytes(100) == "100 B"
    assert format_bytes(2048) == "2.0 KiB"
    assert format_bytes(5 * 1024**4) == "5.0 TiB"
    assert format_duration(4.25) == "4.2s"
    assert format_duration(83.2) == "1m 23s"
    assert format_duration(3723) == "1h 02m 03s"


def test_logstats_line_is_scrapys() -> None:
    assert format_logstats(120, 300, 60, 150) == (
        "Crawled 120 pages (at 60 pages/min), scraped 300 items (at 150 items/min)"
    )


def test_rate_meter_uses_a_sliding_window() -> None:
    meter = RateMeter(window=5.0)
    assert meter.rate() == 0.0
    for t in range(11):
        meter.add(float(t), 10.0 * t if t <= 5 else 50.0 + 2 * (t - 5))
    assert meter.rate() == pytest.approx(2.0)


def test_progress_line_shows_delayed_tasks_only_when_there_are_some() -> None:
    line = render_progress({"waiting": 96, "delayed": 4, "leased": 3, "in_flight": 1}, 0)
    assert "waiting 96 (+4 delayed) · for a slot 3 · in flight 1 · done 0" in line.plain


def test_progress_line_tolerates_odd_snapshots() -> None:
    line = render_progress({"pages": "12", "items": None, "errors": 3, "elapsed": 3725}, 2.5)
    assert line.plain == (
        "12 pages (2.5/s)  │  0 items  │  3 errors  │  waiting 0 · for a slot 0 · "
        "in flight 0 · done 0  │  1:02:05"
    )


def test_log_lines_give_per_minute_rates_over_the_interval() -> None:
    snap = {"pages": 0, "items": 0}
    display = ProgressDisplay(lambda: snap, interval=30.0, live=False)
    assert display.log_line() == format_logstats(0, 0, 0, 0)
    snap.update(pages=60, items=10)
    assert display.log_line() == format_logstats(60, 10, 120, 20)


def test_live_rate_follows_the_clock() -> None:
    clock = FakeClock()
    snap = {"pages": 0}
    display = ProgressDisplay(lambda: snap, live=False, clock=clock)
    display.render()
    clock.advance(2.0)
    snap["pages"] = 10
    line = display.render()
    assert line is not None
    assert "(5.0/s)" in line.plain
    assert line.plain.endswith("0:00:02")  # no "elapsed" in the snapshot: time since start


def test_a_failing_snapshot_skips_a_refresh() -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("engine is busy")

    display = ProgressDisplay(broken, live=False)
    assert display.render() is None
    assert display.log_line() is None


async def test_off_a_terminal_it_logs_lines(caplog) -> None:
    display = ProgressDisplay(
        lambda: {"pages": 3, "items": 1}, console=recording_console(), interval=60.0
    )
    assert display.live is False
    with caplog.at_level(logging.INFO, logger="skitter.stats"):
        async with display:
            await asyncio.sleep(0)  # the task's first step logs at once
    assert caplog.records[0].getMessage().startswith("Crawled 3 pages")


async def test_on_a_terminal_it_draws_and_keeps_the_line() -> None:
    console = recording_console(terminal=True)
    display = ProgressDisplay(lambda: {"pages": 7, "items": 2}, console=console)
    assert display.live is True
    display.start()
    await display.stop()
    assert "7 pages" in console.export_text()
    await display.stop()  # stopping twice is harmless
