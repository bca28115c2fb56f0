"""Helpers for testing crawls and skitter itself.

``FakeClock`` moves only when told to; ``serve_app`` runs an aiohttp app on a free
loopback port; ``TestCrawler`` stands in for the crawler when testing one component;
``FullDisk`` opens feed files on a disk that fills up; ``VirtualTimeLoop`` runs a whole
crawl on virtual time, with ``virtual_clock()`` as its clock.
The reusable frontier contract suite needs pytest, so it is imported explicitly:
``from skitter.testing.frontier_contract import FrontierContract``.
"""

from skitter._clock import FakeClock
from skitter.testing._context import DictStats, TestCrawler
from skitter.testing._disk import FullDisk
from skitter.testing._server import serve_app
from skitter.testing._virtual import VirtualClock, VirtualTimeLoop, virtual_clock

__all__ = [
    "DictStats",
    "FakeClock",
    "FullDisk",
    "TestCrawler",
    "VirtualClock",
    "VirtualTimeLoop",
    "serve_app",
    "virtual_clock",
]
