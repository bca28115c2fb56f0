"""The engine: runs projects, moving requests, responses and items between components."""

from skitter.engine._control import ProjectControl
from skitter.engine._engine import Engine
from skitter.engine._extensions import ExtensionManager
from skitter.engine._monitor import (
    ActiveTask,
    ActivityWindows,
    Outcome,
    ProjectMonitor,
    TaskCounts,
    WindowCounts,
)
from skitter.engine._monitor_factory import make_monitor
from skitter.engine._probe import Probe
from skitter.engine._project import Project
from skitter.engine._scrapy_downloader import ScrapyDownloader
from skitter.engine._scrapy_downloader import Slot as DownloadSlot
from skitter.engine._stats import Stats

__all__ = [
    "ActiveTask",
    "ActivityWindows",
    "DownloadSlot",
    "Engine",
    "ExtensionManager",
    "Outcome",
    "Probe",
    "Project",
    "ProjectControl",
    "ProjectMonitor",
    "ScrapyDownloader",
    "Stats",
    "TaskCounts",
    "WindowCounts",
    "make_monitor",
]
