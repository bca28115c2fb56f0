"""Helpers for testing crawls and skitter itself.

``FakeClock`` moves only when told to; ``serve_app`` runs an aiohttp app on a free
loopback port; ``TestCrawler`` stands in for the crawler when testing one component.
The reusable frontier contract suite needs pytest, so it is imported explicitly:
``from skitter.testing.frontier_contract import FrontierContract``.
"""

from skitter._clock import FakeClock
from skitter.testing._context import DictStats, TestCrawler
from skitter.testing._server import serve_app

__all__ = ["DictStats", "FakeClock", "TestCrawler", "serve_app"]
