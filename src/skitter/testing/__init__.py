"""Helpers for testing crawls and skitter itself.

``FakeClock`` moves only when told to; ``serve_app`` runs an aiohttp app on a free
loopback port. The reusable frontier contract suite needs pytest, so it is imported
explicitly: ``from skitter.testing.frontier_contract import FrontierContract``.
"""

from skitter._clock import FakeClock
from skitter.testing._server import serve_app

__all__ = ["FakeClock", "serve_app"]
