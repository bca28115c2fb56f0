"""Fixtures for the demo shop tests: a served site and a way to turn its pages into
``Response`` objects, so the spider's callbacks run on real bytes from a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest

from skitter.demo import serve_demo_site
from skitter.http import Request, Response

Fetch = Callable[..., Awaitable[Response]]


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    async with serve_demo_site() as url:
        yield url


@pytest.fixture
async def fetch() -> AsyncIterator[Fetch]:
    """``await fetch(url_or_request, allow_redirects=True) -> Response``: the page as sent."""
    async with aiohttp.ClientSession() as session:

        async def _fetch(request: Request | str, *, allow_redirects: bool = True) -> Response:
            if isinstance(request, str):
                request = Request(request)
            async with session.get(request.url, allow_redirects=allow_redirects) as raw:
                body = await raw.read()
                return Response(str(raw.url), raw.status, raw.headers.copy(), body, request)

        yield _fetch
