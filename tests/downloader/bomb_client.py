"""Run by test_bombs.py in a child process, so that its peak memory is its own: fetch one
URL with a 1 MiB DOWNLOAD_MAXSIZE and print the outcome, and how much the peak RSS grew
during the fetch, as one JSON line.

    python bomb_client.py WARMUP_URL URL [TRANSPORT]

TRANSPORT is a DOWNLOAD_TRANSPORT name of an HTTP transport (aiohttp by default).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from skitter.downloader import AiohttpTransport
from skitter.downloader._transports import transport_class
from skitter.http import Request
from skitter.settings import Settings

LIMIT = 1 << 20


class NoStats:
    def inc(self, key: str, count: int = 1) -> None: ...

    def set(self, key: str, value: Any) -> None: ...

    def max(self, key: str, value: float) -> None: ...

    def get(self, key: str, default: Any = None) -> Any:
        return default


def status_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    raise LookupError(field)


def reset_peak() -> None:
    """Start the peak (VmHWM) from the current RSS, so that what imports and the warm-up
    once took cannot hide what the fetch takes."""
    Path("/proc/self/clear_refs").write_text("5")


async def main(warmup: str, url: str, name: str = "aiohttp") -> dict[str, Any]:
    settings = Settings({"DOWNLOAD_MAXSIZE": LIMIT, "DOWNLOAD_TIMEOUT": 50.0})
    transport = (
        AiohttpTransport(settings, NoStats())
        if name == "aiohttp"
        else transport_class(name)(settings, NoStats())
    )
    async with transport:
        await transport.fetch(Request(warmup))  # code loaded, connection pooled
        reset_peak()
        before = status_mb("VmRSS")
        try:
            response = await transport.fetch(Request(url))
            outcome: dict[str, Any] = {"status": response.status, "size": len(response.body)}
        except Exception as exc:
            outcome = {"error": type(exc).__name__, "message": str(exc)}
        outcome["growth_mb"] = status_mb("VmHWM") - before
    return outcome


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
