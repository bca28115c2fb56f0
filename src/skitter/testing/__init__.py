"""Helpers for testing crawls and skitter itself.

``MockTransport`` answers a crawl's requests with a handler function instead of a
server (``{"DOWNLOAD_TRANSPORT": MockTransport(handler)}``), through the same response
path as the network; ``MockResponse`` is what a handler answers. ``FakeClock`` moves
only when told to; ``VirtualTimeLoop`` runs a whole crawl on virtual time, with
``virtual_clock()`` as its clock; ``serve_app`` runs an aiohttp app on a free loopback
port, ``refused_port`` gives one where connections are refused; ``TestCrawler`` stands
in for the crawler when testing one component; ``FullDisk`` opens feed files on a disk
that fills up; ``wait_until`` polls a condition with a bound, where a test would
otherwise guess a sleep.
The reusable contract suites need pytest, so they are imported explicitly:
``from skitter.testing.frontier_contract import FrontierContract``, and for the open
registries ``skitter.testing.feed_contract`` (exporters, feed storages) and
``skitter.testing.media_contract`` (media stores).
"""

from skitter._clock import FakeClock
from skitter.testing._context import DictStats, TestCrawler
from skitter.testing._disk import FullDisk
from skitter.testing._server import refused_port, serve_app
from skitter.testing._transport import MockResponse, MockTransport
from skitter.testing._virtual import VirtualClock, VirtualTimeLoop, virtual_clock
from skitter.testing._wait import wait_until

__all__ = [
    "DictStats",
    "FakeClock",
    "FullDisk",
    "MockResponse",
    "MockTransport",
    "TestCrawler",
    "VirtualClock",
    "VirtualTimeLoop",
    "refused_port",
    "serve_app",
    "virtual_clock",
    "wait_until",
]
