"""Compression bombs against a real server, fetched through each HTTP transport by a
child process whose peak RSS is measured: with a 1 MiB DOWNLOAD_MAXSIZE each fails with
ResponseTooLarge and the child grows by a small multiple of the limit, whatever the
coding, stack or chunking."""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from .codings import CODINGS, STACKS, MiB, zeros_after
from .conftest import HTTP_TRANSPORTS

LIMIT = 1 << 20  # bomb_client.py's DOWNLOAD_MAXSIZE
ZEROS = 128  # MiB of zeros in each bomb: far past the limit and the bound below
GROWTH_BOUND_MB = 48  # "a small multiple of the limit"; today's worst is about 20
CLIENT = Path(__file__).with_name("bomb_client.py")


def gzip_members() -> list[bytes]:
    """Zeros as many small gzip members: every member after the first is capped too."""
    return [gzip.compress(bytes(MiB), 9) * ZEROS]


# name -> (Content-Encoding, parts sent with a pause between them)
BOMBS: dict[str, tuple[str, Callable[[], list[bytes]]]] = {
    "gzip-members": ("gzip", gzip_members),
}
for _header in CODINGS + STACKS:
    BOMBS[_header] = (_header, functools.partial(zeros_after, _header, b"", ZEROS))
    # The first part decodes to exactly the limit, and arrives on its own: the budget
    # left is 0 when the zeros start, which must not mean "no limit".
    BOMBS[f"{_header} at the limit"] = (
        _header,
        functools.partial(zeros_after, _header, bytes(LIMIT), ZEROS),
    )


@functools.cache
def bomb(name: str) -> tuple[str, list[bytes]]:
    coding, make = BOMBS[name]
    return coding, make()


async def serve_bomb(request: web.Request) -> web.StreamResponse:
    coding, parts = bomb(request.query["name"])
    resp = web.StreamResponse(headers={"Content-Encoding": coding})  # chunked, no length
    await resp.prepare(request)
    try:
        for i, part in enumerate(parts):
            if i:
                await asyncio.sleep(0.1)  # so that the part before arrives on its own
            for pos in range(0, len(part), 64 * 1024):
                await resp.write(part[pos : pos + 64 * 1024])
        await resp.write_eof()
    except (ConnectionError, RuntimeError):
        pass  # the client cut us off, as it should
    return resp


async def warmup(request: web.Request) -> web.Response:
    return web.Response(
        body=gzip.compress(b"<p>hello</p>" * 1000), headers={"Content-Encoding": "gzip"}
    )


async def fetch_in_child(base: str, name: str, via: str = "aiohttp") -> dict[str, Any]:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CLIENT),
        f"{base}/warmup",
        f"{base}/bomb?name={name}",
        via,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    return json.loads(out)


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("name", sorted(BOMBS))
async def test_a_bomb_fails_and_memory_stays_bounded(name: str, via: str, serve: Any) -> None:
    await asyncio.to_thread(bomb, name)  # built before the server is asked for it
    app = web.Application()
    app.router.add_get("/bomb", serve_bomb)
    app.router.add_get("/warmup", warmup)
    base = await serve(app)
    outcome = await fetch_in_child(base, name, via)
    assert outcome.get("error") == "ResponseTooLarge", outcome
    assert "decoded body is larger than DOWNLOAD_MAXSIZE" in outcome["message"]
    assert outcome["growth_mb"] < GROWTH_BOUND_MB, outcome
