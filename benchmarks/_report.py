"""How a benchmark child process measures itself and reports back to crawl_bench.py.

Each crawler runs in its own process so that its peak RSS and CPU time are its own.
The child reads ``getrusage(RUSAGE_SELF)`` when the crawl starts and when it ends
(imports and interpreter start-up are not counted) and prints one line,
``BENCH-RESULT {json}``, on stdout; whatever else the crawler prints is ignored.
Besides pages and items, each child counts its pages per host (``host_of``: the
``host:port`` of a URL), so the parent can check that a multi-host crawl fetched every
page from the port it lives on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["MARKER", "Meter", "child_args", "host_of", "run_on"]

T = TypeVar("T")

MARKER = "BENCH-RESULT "


def host_of(url: str) -> str:
    """The ``host:port`` of an absolute ``http://`` URL (cheap: called once per page)."""
    return url.split("/", 3)[2]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Meter:
    """Started when the crawl starts; ``report()`` prints the result line."""

    def __init__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = _cpu()

    def report(self, pages: int, items: int, **extra: Any) -> None:
        result = {
            "pages": pages,
            "items": items,
            "elapsed": time.perf_counter() - self._wall,
            "cpu": _cpu() - self._cpu,
            # ru_maxrss is in KiB on Linux: the peak of the whole process.
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            **extra,
        }
        print(MARKER + json.dumps(result, default=str), flush=True)


def child_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("start_url")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    return parser.parse_args()


def run_on(loop: str, coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` on asyncio's loop or on uvloop's (``--loop``)."""
    factory = None
    if loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)


def run_whole(command: list[str], **popen: Any) -> tuple[int, str, dict[str, float]]:
    """Run ``command`` to its end and measure the whole process, as ``time`` would:
    wall seconds, CPU seconds (user + system, start-up and imports included) and peak
    RSS, from ``wait4``. Returns the exit status, its stdout and those figures."""
    import os
    import subprocess

    wall = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, **popen)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    figures = {
        "elapsed": time.perf_counter() - wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,
    }
    return child.returncode, out, figures
