"""Run history: what item_count_change compares a run with.

``RunHistory`` is the seam: ``last(spider)`` the latest comparable run of a spider (one
that ended "finished": a run closed early or failed is no measure of what the site
holds), ``add(record)`` once a run has ended. ``FileRunHistory`` keeps them as JSON
lines in a folder (``runs.jsonl``): the job directory by default, or MONITOR_HISTORY. A
service that keeps runs for many crawls implements the same two methods and is named
by MONITOR_HISTORY (an object, or the path of a class built with ``from_crawler``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from skitter._components import build_component, load_object
from skitter._types import CrawlContext
from skitter.exceptions import ConfigError
from skitter.settings import MonitorSettings

__all__ = ["FileRunHistory", "RunHistory", "RunRecord", "open_history"]

log = logging.getLogger("skitter.monitors")

#: The stats a record keeps beside the item count.
KEPT_STATS = (
    "item_scraped_count",
    "response_received_count",
    "downloader/request_count",
    "log_count/ERROR",
    "elapsed_time_seconds",
)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One ended run, as the history keeps it."""

    spider: str
    finished_at: float
    finish_reason: str
    items: int
    #: passed, warned or failed: what the monitors said.
    status: str = "passed"
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def comparable(self) -> bool:
        return self.finish_reason == "finished"

    @classmethod
    def of(cls, spider: str, stats: dict[str, Any], status: str) -> RunRecord:
        return cls(
            spider=spider,
            finished_at=float(stats.get("finish_time") or 0.0),
            finish_reason=str(stats.get("finish_reason")),
            items=int(stats.get("item_scraped_count", 0)),
            status=status,
            stats={key: stats[key] for key in KEPT_STATS if key in stats},
        )


class RunHistory(Protocol):
    """Where ended runs are remembered (see the module's docstring)."""

    async def last(self, spider: str) -> RunRecord | None: ...

    async def add(self, record: RunRecord) -> None: ...


class FileRunHistory:
    """Runs as JSON lines in ``folder/runs.jsonl``, newest last."""

    FILE = "runs.jsonl"

    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / self.FILE

    async def last(self, spider: str) -> RunRecord | None:
        return await asyncio.to_thread(self._last, spider)

    def _last(self, spider: str) -> RunRecord | None:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return None
        for line in reversed(lines):
            try:
                record = RunRecord(**orjson.loads(line))
            except (ValueError, TypeError):
                log.warning("Run history %s: an unreadable line is skipped", self.path)
                continue
            if record.spider == spider and record.comparable:
                return record
        return None

    async def add(self, record: RunRecord) -> None:
        await asyncio.to_thread(self._add, record)

    def _add(self, record: RunRecord) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as out:
            out.write(orjson.dumps(asdict(record)) + b"\n")


def open_history(crawler: CrawlContext) -> RunHistory | None:
    """MONITOR_HISTORY's history, else one in the job directory, else None."""
    spec = crawler.settings.view(MonitorSettings).monitor_history
    if spec is None:
        job = getattr(crawler, "job", None)
        return FileRunHistory(job.path) if job is not None else None
    if isinstance(spec, Path) or (
        isinstance(spec, str) and ("/" in spec or "." not in spec or Path(spec).is_dir())
    ):
        return FileRunHistory(spec)  # a folder; a dotted name is an object's path
    obj = load_object(spec)
    if isinstance(obj, type):
        obj = build_component(obj, crawler)
    if not (callable(getattr(obj, "last", None)) and callable(getattr(obj, "add", None))):
        raise ConfigError(
            f"MONITOR_HISTORY: {spec!r} is not a folder nor a RunHistory "
            "(async last(spider) and add(record))"
        )
    history: RunHistory = obj
    return history
