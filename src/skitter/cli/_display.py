"""What a person watching the crawl sees: a live progress line and the final stats table.

On a terminal, ``ProgressDisplay`` keeps one rich line up to date ~4 times a second:
pages, pages/s over the last few seconds, items, errors, the tasks by where they are
(waiting in the frontier, and delayed there when any are; leased and waiting for a
download slot; in flight; done: ``engine.TaskCounts``), elapsed. Off a terminal (CI
logs, ``nohup``, a pipe) a redrawn line is noise, so it logs Scrapy's LogStats line
every LOGSTATS_INTERVAL seconds instead.

The display only reads: it calls a snapshot function supplied by the caller and never
touches the engine. The snapshot is a mapping with the keys ``pages``, ``items``,
``errors``, ``waiting``, ``delayed``, ``leased``, ``in_flight``, ``done`` and
``elapsed`` (seconds; when missing, the time since the display started); other missing
or odd values read as 0, and an exception from the snapshot skips one refresh, so a
display can never take a crawl down.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Mapping
from datetime import date, datetime
from types import TracebackType
from typing import Any

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from skitter._clock import Clock, SystemClock
from skitter._tasks import Background, periodic

__all__ = [
    "ProgressDisplay",
    "RateMeter",
    "format_bytes",
    "format_duration",
    "format_logstats",
    "format_stat",
    "print_stats",
    "render_progress",
    "render_stats_table",
]

log = logging.getLogger("skitter.stats")

Snapshot = Callable[[], Mapping[str, Any]]


# -- numbers for people -----------------------------------------------------------------
def _number(value: Any) -> float:
    """A snapshot value as a finite number; anything else reads as 0."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def format_bytes(size: float) -> str:
    """``12345678`` -> ``"11.8 MiB"``."""
    value = float(size)
    if abs(value) < 1024:
        return f"{value:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if abs(value) < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TiB"


def format_duration(seconds: float) -> str:
    """``83.2`` -> ``"1m 23s"``; ``4.25`` -> ``"4.2s"``; ``3723`` -> ``"1h 02m 03s"``."""
    if not math.isfinite(seconds) or seconds < 0:
        return str(seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s"


def _clock_time(seconds: float) -> str:
    whole = int(max(seconds, 0))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def format_logstats(pages: int, items: int, pages_per_min: float, items_per_min: float) -> str:
    """Scrapy's LogStats line, word for word."""
    return (
        f"Crawled {pages} pages (at {pages_per_min:.0f} pages/min), "
        f"scraped {items} items (at {items_per_min:.0f} items/min)"
    )


# -- the live line --------------------------------------------------------------------
class RateMeter:
    """The rate of a growing counter over the last ``window`` seconds (sans-I/O)."""

    def __init__(self, window: float = 5.0) -> None:
        self.window = window
        self._samples: deque[tuple[float, float]] = deque()

    def add(self, now: float, value: float) -> None:
        samples = self._samples
        samples.append((now, value))
        while len(samples) > 2 and now - samples[1][0] >= self.window:
            samples.popleft()

    def rate(self) -> float:
        if len(self._samples) < 2:
            return 0.0
        (t0, v0), (t1, v1) = self._samples[0], self._samples[-1]
        return (v1 - v0) / (t1 - t0) if t1 > t0 else 0.0


def render_progress(snapshot: Mapping[str, Any], pages_per_second: float) -> Text:
    """The live line for one snapshot."""

    def count(key: str) -> str:
        return f"{int(_number(snapshot.get(key))):,}"

    errors = int(_number(snapshot.get("errors")))
    delayed = int(_number(snapshot.get("delayed")))
    parts: list[tuple[str, str] | str] = [
        (count("pages"), "bold"),
        " pages ",
        (f"({pages_per_second:,.1f}/s)", "cyan"),
        "  │  ",
        (count("items"), "bold green"),
        " items  │  ",
        (f"{errors:,}", "bold red" if errors else "dim"),
        " errors  │  waiting ",
        (count("waiting"), "bold"),
    ]
    if delayed:
        parts += [" (", (f"+{delayed:,}", "bold"), " delayed)"]
    parts += [
        " · for a slot ",
        (count("leased"), "bold"),
        " · in flight ",
        (count("in_flight"), "bold"),
        " · done ",
        (count("done"), "bold"),
        "  │  ",
        (_clock_time(_number(snapshot.get("elapsed"))), "dim"),
    ]
    return Text.assemble(*parts)


class ProgressDisplay:
    """Shows crawl progress while the crawl runs; use ``async with`` or start()/stop().

    ``live`` forces the terminal line on or off; by default it is on when ``console``
    (stderr) is a terminal. ``interval`` is LOGSTATS_INTERVAL.
    """

    def __init__(
        self,
        snapshot: Snapshot,
        *,
        console: Console | None = None,
        interval: float = 60.0,
        refresh_per_second: float = 4.0,
        live: bool | None = None,
        clock: Clock | None = None,
        logger: logging.Logger | logging.LoggerAdapter[logging.Logger] | None = None,
    ) -> None:
        self._snapshot = snapshot
        self.console = console or Console(stderr=True)
        self.interval = interval
        self.refresh = 1.0 / refresh_per_second
        self.live = self.console.is_terminal if live is None else live
        self._clock: Clock = clock or SystemClock()
        self._log = logger or log
        self._meter = RateMeter()
        self._started_at = self._clock.monotonic()
        self._previous: tuple[int, int] | None = None
        self._task = Background("skitter-progress" if self.live else "skitter-logstats")
        self._live: Live | None = None

    def _read(self) -> Mapping[str, Any] | None:
        try:
            snapshot = self._snapshot()
        except Exception:
            log.debug("Progress snapshot failed", exc_info=True)
            return None
        return snapshot if isinstance(snapshot, Mapping) else None

    # -- one refresh, each testable without time ----------------------------------------
    def render(self) -> Text | None:
        """The live line for the current snapshot, updating the page rate."""
        snapshot = self._read()
        if snapshot is None:
            return None
        now = self._clock.monotonic()
        self._meter.add(now, _number(snapshot.get("pages")))
        if "elapsed" not in snapshot:
            snapshot = {**snapshot, "elapsed": now - self._started_at}
        return render_progress(snapshot, self._meter.rate())

    def log_line(self) -> str | None:
        """The LogStats line since the previous call (rates per minute over interval)."""
        snapshot = self._read()
        if snapshot is None:
            return None
        pages = int(_number(snapshot.get("pages")))
        items = int(_number(snapshot.get("items")))
        per_min = 60.0 / self.interval if self.interval > 0 else 0.0
        # The first line is the baseline: a resumed job starts with its earlier counts.
        previous_pages, previous_items = self._previous or (pages, items)
        self._previous = (pages, items)
        return format_logstats(
            pages, items, (pages - previous_pages) * per_min, (items - previous_items) * per_min
        )

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Begin showing progress (needs a running event loop)."""
        if self._task.running:
            return
        self._started_at = self._clock.monotonic()
        if self.live:
            self._live = Live(
                self.render() or Text(""),
                console=self.console,
                auto_refresh=False,
                transient=False,
            )
            self._live.start()
            self._task.start(periodic(self.refresh, self._refresh_live))
        else:
            self._task.start(self._run_log())

    async def stop(self) -> None:
        """Stop refreshing; the live line is drawn one last time and kept."""
        await self._task.stop()
        live, self._live = self._live, None
        if live is not None:
            line = self.render()
            if line is not None:
                live.update(line, refresh=True)
            live.stop()

    async def __aenter__(self) -> ProgressDisplay:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _refresh_live(self) -> None:
        line = self.render()
        if line is not None and self._live is not None:
            self._live.update(line, refresh=True)

    async def _run_log(self) -> None:
        if self.interval > 0:
            await periodic(self.interval, self._log_once, first=True)

    async def _log_once(self) -> None:
        line = self.log_line()
        if line is not None:
            self._log.info("%s", line)


# -- the final table ------------------------------------------------------------------
def format_stat(key: str, value: Any) -> Text:
    """One stats value for people: thousands separators, bytes and durations spelled
    out as a hint, epoch timestamps as dates. Never raises."""
    try:
        return _format_stat(str(key), value)
    except Exception:
        return Text(f"<unprintable {type(value).__name__}>", style="dim")


def _format_stat(key: str, value: Any) -> Text:
    hint = ""
    name = key.rsplit("/", 1)[-1]
    if isinstance(value, bool) or value is None:
        text = str(value)
    elif isinstance(value, int):
        text = f"{value:,}"
        if "bytes" in name and abs(value) >= 1024:
            hint = format_bytes(value)
    elif isinstance(value, float):
        if name.endswith("_time") and value > 1e9:
            text = datetime.fromtimestamp(value).isoformat(sep=" ", timespec="seconds")
        elif not math.isfinite(value):
            text = str(value)
        else:
            text = f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.4g}"
            if name.endswith(("_seconds", "elapsed", "_duration")) and value >= 60:
                hint = format_duration(value)
            elif "bytes" in name and abs(value) >= 1024:
                hint = format_bytes(value)
    elif isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="seconds")
    elif isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, str):
        return Text(value, justify="left")
    else:
        return Text(f"{value!r:.200}", justify="left")
    out = Text(text)
    if hint:
        out.append(f" ({hint})", style="dim")
    return out


def render_stats_table(stats: Mapping[str, Any], *, title: str | None = "Crawl stats") -> Table:
    """The stats as a two-column table sorted by key, numbers right-aligned. Also takes
    an object with ``to_dict()`` (the engine's ``Stats``)."""
    if not isinstance(stats, Mapping) and callable(getattr(stats, "to_dict", None)):
        stats = stats.to_dict()
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("Stat", style="cyan", no_wrap=True)
    table.add_column("Value", justify="right")
    for key in sorted(stats, key=str):
        try:
            value = stats[key]
        except Exception:
            value = "<unreadable>"
        table.add_row(Text(str(key)), format_stat(key, value))
    return table


def print_stats(stats: Mapping[str, Any], console: Console | None = None) -> None:
    """Print the stats table (to stderr unless a console is given)."""
    (console or Console(stderr=True)).print(render_stats_table(stats))
