"""Which monitor a project gets: the plain one, or with TRACING_ENABLED the tracing one."""

from __future__ import annotations

from skitter._clock import Clock
from skitter.engine._monitor import ProjectMonitor
from skitter.settings import EngineSettings, Settings
from skitter.signals import SignalManager

__all__ = ["make_monitor"]


def make_monitor(settings: Settings, clock: Clock, signals: SignalManager) -> ProjectMonitor:
    """The project's monitor: with TRACING_ENABLED, one that also traces each task and
    callback (``_tracing``, skitter[otel]: imported only then, so an untraced crawl
    neither loads OpenTelemetry nor pays a call for it)."""
    if not settings.view(EngineSettings).tracing_enabled:
        return ProjectMonitor(clock)
    from skitter.engine._tracing import TracingMonitor

    return TracingMonitor.from_settings(settings, clock, signals)
