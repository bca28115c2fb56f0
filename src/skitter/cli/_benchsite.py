"""The site ``skitter bench`` crawls: ``/p/N`` links to ten more pages, endlessly.

Run as ``python -m skitter.cli._benchsite``: it serves on a free loopback port, prints
its base URL on the first line of stdout, and runs until terminated. It is a module of
its own (not imported by the command) so that running it does not import it twice.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from skitter.testing import serve_app

__all__ = ["serve_site", "site"]

_FANOUT = 10


def site() -> web.Application:
    """The bench site's application."""

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        links = "".join(
            f'<a href="/p/{n * _FANOUT + i}">page {i}</a> ' for i in range(1, _FANOUT + 1)
        )
        body = f"<html><head><title>page {n}</title></head><body>{links}</body></html>"
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n:\\d+}", page)
    return app


async def serve_site() -> None:
    """Serve the bench site on a free loopback port; print its URL; run until killed."""
    async with serve_app(site()) as url:
        print(url, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_site())
