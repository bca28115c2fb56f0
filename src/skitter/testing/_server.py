"""Serving an aiohttp application on a free loopback port, for tests and demos; a
port where connections are refused."""

from __future__ import annotations

import atexit
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

__all__ = ["refused_port", "serve_app"]

#: The sockets behind ``refused_port``: bound, never listening, kept until the process ends.
_HELD: list[socket.socket] = []


@atexit.register
def _release() -> None:
    """Close the held sockets as the process ends (no ResourceWarning at exit)."""
    while _HELD:
        _HELD.pop().close()


@asynccontextmanager
async def serve_app(
    app: web.Application, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[str]:
    """Run ``app`` until the block ends; yields its base URL (no trailing slash)."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        yield f"http://{bound_host}:{bound_port}"
    finally:
        await runner.cleanup()


def refused_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` where a connection is refused, and stays refused.

    A port found free and closed again may be taken by the next server anyone starts (a
    test in another pytest-xdist worker): the test that expected a refusal would then
    talk to it. This one stays bound, never listening, until the process ends, so no
    server can take it; connecting to it is refused (ECONNREFUSED) all that time.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    _HELD.append(sock)
    return int(sock.getsockname()[1])
