"""The frontier contract, run on ``RemoteFrontier``: a worker's view of the frontier
that a ``--processes`` coordinator serves (``multiproc.FrontierService``) over a real
Unix socket, in front of the SQLite backend, as a crawl with a job directory has it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skitter.frontier import Frontier
from skitter.frontier._remote import FrameChannel, Outbox, RemoteFrontier, answer_calls
from skitter.frontier._sqlite import SqliteFrontier
from skitter.multiproc import FrontierService
from skitter.testing.frontier_contract import FailedTasksContract, FrontierContract


def _serving(service: FrontierService) -> object:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answer_calls(reader, Outbox(writer), lambda op, args: service.handle(0, op, args))
        writer.close()

    return serve


class TestRemoteFrontier(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self, tmp_path: Path) -> AsyncIterator[Frontier]:
        real = SqliteFrontier(tmp_path / "job" / "tasks.db")
        path = str(tmp_path / "f.sock")
        server = await asyncio.start_unix_server(
            _serving(FrontierService(real, None, 1)),  # type: ignore[arg-type]
            path,
        )
        channel = await FrameChannel.connect(path)
        yield RemoteFrontier(channel)
        await channel.close()
        server.close()
        await server.wait_closed()
        await real.close()
