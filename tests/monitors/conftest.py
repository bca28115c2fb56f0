"""Real receivers on 127.0.0.1 for alerts: a webhook endpoint (aiohttp) and an SMTP
server (aiosmtpd), both on the test's own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from aiohttp import web
from aiosmtpd.smtp import SMTP, Envelope, Session

from cli._cli import run_cli  # tests/cli: the command in this process
from skitter.testing import serve_app


class Receiver:
    """Records the JSON bodies POSTed to ``/hook/<name>``; ``fail[name]`` is a list of
    statuses to answer first (one per request), before 200."""

    def __init__(self) -> None:
        self.posts: dict[str, list[Any]] = {}
        self.fail: dict[str, list[int]] = {}
        self.app = web.Application()
        self.app.router.add_post("/hook/{name}", self.handle)
        self.base = ""

    async def handle(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.posts.setdefault(name, []).append(await request.json())
        statuses = self.fail.get(name)
        if statuses:
            return web.Response(status=statuses.pop(0), text="no")
        return web.Response(text="ok")

    def url(self, name: str) -> str:
        return f"{self.base}/hook/{name}"


class Mailbox:
    """An SMTP server's handler: every message it accepted."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[Envelope] = []
        self.port = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        content = envelope.original_content or b""
        self.messages.append(message_from_bytes(content, policy=policy.default))  # type: ignore[arg-type]
        return "250 OK"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    hooks = Receiver()
    async with serve_app(hooks.app) as base:
        hooks.base = base
        yield hooks


@pytest.fixture
async def mailbox() -> AsyncIterator[Mailbox]:
    box = Mailbox()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(box), "127.0.0.1", 0)
    box.port = server.sockets[0].getsockname()[1]
    try:
        yield box
    finally:
        server.close()
        await server.wait_closed()


#: The ``serve`` fixture of tests/conftest.py: ``base_url = await serve(app)``.
Serve = Callable[[web.Application], Awaitable[str]]


class CliRun(NamedTuple):
    code: int
    out: str
    err: str


Cli = Callable[..., Awaitable[CliRun]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """``await cli(*args)``: the ``skitter`` command in ``tmp_path``, in this process
    (tests/cli/_cli.py), without the developer's SKITTER_ variables; the test's loop
    serves its receivers meanwhile."""

    async def run(*args: str) -> CliRun:
        return CliRun(*await run_cli(*args, cwd=tmp_path))

    return run
