"""The engine: runs projects, moving requests, responses and items between components."""

from skitter.engine._engine import Engine
from skitter.engine._monitor import ActiveTask, Outcome, ProjectMonitor, WindowCounts
from skitter.engine._project import Project
from skitter.engine._stats import Stats

__all__ = [
    "ActiveTask",
    "Engine",
    "Outcome",
    "Project",
    "ProjectMonitor",
    "Stats",
    "WindowCounts",
]
