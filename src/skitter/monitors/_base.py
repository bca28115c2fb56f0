"""What a monitor is, what it sees of the run, and what it says.

A monitor is anything with ``name``, ``level`` ("fail" or "warn") and ``check(run)``:
the built-ins (``_builtin``) and the project's own, given in MONITORS as a plain
function or a class (``as_monitor`` adapts both). A check passes by returning None or
True; it fails by returning False or a message, or by raising ``MonitorFailed`` (or an
``AssertionError``, so ``assert`` reads as in a test); it may return a ``MonitorResult``
itself. Any other exception is the monitor's bug: its result is "error", which counts
as a failure at its level, since a monitor that could not look cannot say all is well.

``Run`` is what every check reads: the stats (a snapshot), the settings, the spider,
whether the crawl has ended (``final``; periodic runs see False), the seconds since it
started and the last comparable run (``previous``, from MONITOR_HISTORY).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from skitter._components import build_component, load_object
from skitter._types import CrawlContext
from skitter.exceptions import ConfigError
from skitter.pipelines import coverage

if TYPE_CHECKING:
    from skitter.monitors._history import RunRecord

__all__ = [
    "LEVELS",
    "Monitor",
    "MonitorFailed",
    "MonitorResult",
    "Run",
    "as_monitor",
    "evaluate",
    "level_of",
]

LEVELS = ("fail", "warn")


class MonitorFailed(Exception):
    """Raised by a monitor's check: the run fails it, for the reason given."""


@dataclass(frozen=True, slots=True)
class MonitorResult:
    """One monitor's verdict. ``status`` is passed, failed, skipped or error."""

    name: str
    status: str
    message: str = ""
    level: str = "fail"
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Whether the run fails this monitor (an error counts: it could not look)."""
        return self.status in ("failed", "error")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "level": self.level,
            "message": self.message,
            "details": dict(self.details),
        }


@dataclass(frozen=True, slots=True)
class Run:
    """The run as monitors see it."""

    spider: Any
    stats: Mapping[str, Any]
    settings: Mapping[str, Any]
    final: bool
    elapsed: float
    previous: RunRecord | None = None

    def coverage(self) -> dict[str, dict[str, float]]:
        """{item class: {field: fraction of its items with the field filled}}."""
        return coverage(self.stats)


class Monitor(Protocol):
    """A check of the run (see the module's docstring)."""

    name: str
    level: str

    def check(self, run: Run) -> Any: ...


def level_of(value: Any, where: str) -> str:
    if value not in LEVELS:
        raise ConfigError(f"{where}: the level must be 'fail' or 'warn', not {value!r}")
    return str(value)


@dataclass(slots=True)
class _Adapted:
    """A project's monitor: a function, or an object with ``check``."""

    name: str
    level: str
    call: Callable[[Run], Any]
    #: Whether it also runs during the crawl (``periodic = True`` on it).
    periodic: bool = False

    def check(self, run: Run) -> Any:
        return self.call(run)


def as_monitor(spec: Any, level: str, crawler: CrawlContext) -> _Adapted:
    """A MONITORS entry (a function, a class, an instance, or the path of one) as a
    monitor: a class is built as components are (``from_crawler`` if it has one)."""
    obj = load_object(spec)
    if isinstance(obj, type):
        obj = build_component(obj, crawler)
    check = getattr(obj, "check", None)
    if callable(check):
        name = str(getattr(obj, "name", None) or type(obj).__name__)
        call: Callable[[Run], Any] = check
    elif inspect.isfunction(obj) or callable(obj):
        name = str(getattr(obj, "__name__", None) or repr(obj))
        call = obj
    else:
        raise ConfigError(f"MONITORS: {spec!r} is neither a function nor has check(run)")
    if inspect.iscoroutinefunction(call):
        raise ConfigError(f"MONITORS: {name} is async; a check reads the run and returns")
    return _Adapted(name, level, call, bool(getattr(obj, "periodic", False)))


def evaluate(monitor: Monitor, run: Run) -> MonitorResult:
    """Run one check and read its answer (see the module's docstring)."""
    name, level = monitor.name, monitor.level
    try:
        answer = monitor.check(run)
    except (MonitorFailed, AssertionError) as exc:
        return MonitorResult(name, "failed", str(exc) or "failed", level)
    except Exception as exc:
        return MonitorResult(name, "error", f"{type(exc).__name__}: {exc}", level)
    if isinstance(answer, MonitorResult):
        return answer
    if answer is None or answer is True:
        return MonitorResult(name, "passed", "", level)
    if answer is False:
        return MonitorResult(name, "failed", "returned False", level)
    if isinstance(answer, str):
        return MonitorResult(name, "failed", answer, level)
    return MonitorResult(
        name, "error", f"returned {type(answer).__name__}; return None, a bool or a message", level
    )
