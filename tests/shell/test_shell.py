"""``Shell`` in process: fetch() downloads through the crawl's components on the shell's
own loop thread while the caller blocks (so the tests call it from a worker thread: the
site runs on the test's loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.shell import LoopThread, Shell

Serve = Any


class Local(Spider):
    name = "local"
    allowed_domains = ["127.0.0.1"]


def _site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><h1>Hello</h1></html>", content_type="text/html")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/page")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/moved", moved)
    return app


@pytest.fixture
def shell() -> Iterator[Shell]:
    loop = LoopThread()
    shell = Shell(Crawler(Local), loop=loop)
    try:
        yield shell
    finally:
        shell.close()
        loop.close()


async def test_fetch_updates_request_and_response(serve: Serve, shell: Shell) -> None:
    base = await serve(_site())
    await asyncio.to_thread(shell.fetch, base + "/moved")
    response = shell.vars["response"]
    assert (response.status, response.url) == (200, base + "/page")
    assert shell.vars["request"] is response.request
    assert shell.vars["spider"].name == "local"
    assert response.css("h1::text").get() == "Hello"
    await asyncio.to_thread(shell.fetch, base + "/moved", redirect=False)
    assert shell.vars["response"].status == 302
    await asyncio.to_thread(shell.fetch, Request(base + "/page", meta={"mine": 1}))
    assert shell.vars["response"].meta["mine"] == 1


async def test_a_refused_fetch_leaves_no_response_and_says_why(
    serve: Serve, shell: Shell, capsys: pytest.CaptureFixture[str]
) -> None:
    base = await serve(_site())
    await asyncio.to_thread(shell.fetch, base.replace("127.0.0.1", "localhost") + "/page")
    assert shell.vars["response"] is None
    assert shell.error is not None
    assert "outside allowed_domains" in capsys.readouterr().err


def test_help_and_a_shell_without_fetch() -> None:
    waiting = Shell(None)  # as inspect_response opens it: the crawl's loop is busy
    waiting.populate_vars()
    assert "fetch" not in waiting.vars
    assert "fetch(url" not in waiting.get_help()
    with pytest.raises(RuntimeError, match="not available"):
        waiting.fetch("http://127.0.0.1:1/")
    code = Shell(None, code="1 + 1")
    assert code.start() == 2
