"""Links in flight between a worker's two push steps (``known``, then ``push``): pages
crawled at the same time link to the same new page, and only the first asker sends it.
The service is called directly (two workers of a ``--processes`` coordinator), and
through a real socket where the worker's side is the subject."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skitter.exceptions import CodecError
from skitter.frontier import MemoryFrontier, PushOutcome
from skitter.frontier._remote import FrameChannel, Outbox, RemoteFrontier, answer_calls
from skitter.http import Request
from skitter.http.wiring import encode_request
from skitter.multiproc import FrontierService

NOW = 1000.0
NEW, MERGED = int(PushOutcome.NEW), int(PushOutcome.MERGED)


def _key(request: Request, priority: int = 0) -> list[object]:
    return [request.fingerprint, priority, request.age, True]


def _wire(request: Request, priority: int = 0) -> list[object]:
    return [*_key(request, priority), encode_request(request)]


@pytest.fixture
async def service() -> AsyncIterator[FrontierService]:
    frontier = MemoryFrontier()
    yield FrontierService(frontier, None, 2)
    await frontier.close()


async def test_a_key_asked_again_before_its_push_is_merged_and_never_sent(
    service: FrontierService,
) -> None:
    page = Request("http://a.test/new")
    assert await service.known(0, [_key(page)], NOW) == [0]
    # Worker 1's page links to it too, before worker 0's push arrives: nothing to send.
    assert await service.known(1, [_key(page), _key(page)], NOW) == [MERGED, MERGED]
    assert await service.known(0, [_key(page)], NOW) == [MERGED]  # another page of 0's
    assert await service.push(0, [_wire(page)], NOW, None) == [NEW]
    assert service.decoded == 1
    # Once queued, the frontier answers from the key alone, as before.
    assert await service.known(1, [_key(page)], NOW) == [MERGED]
    assert (await service.frontier.counts(NOW)).ready == 1


async def test_the_same_new_key_twice_in_one_batch_is_sent_once(
    service: FrontierService,
) -> None:
    page = Request("http://a.test/twice")
    assert await service.known(0, [_key(page), _key(page)], NOW) == [0, MERGED]


async def test_a_higher_priority_is_sent_in_full_for_the_frontier_to_merge(
    service: FrontierService,
) -> None:
    low, high = Request("http://a.test/p"), Request("http://a.test/p", priority=5)
    assert await service.known(0, [_key(low)], NOW) == [0]
    assert await service.known(1, [_key(high, 5)], NOW) == [0]
    assert await service.push(1, [_wire(high, 5)], NOW, None) == [NEW]
    assert await service.push(0, [_wire(low)], NOW, None) == [MERGED]
    [lease] = await service.frontier.lease(1, NOW, 60)
    assert lease.request.priority == 5


async def test_a_released_or_lost_promise_lets_the_next_asker_send(
    service: FrontierService, caplog: pytest.LogCaptureFixture
) -> None:
    one, two = Request("http://a.test/one"), Request("http://a.test/two")
    assert await service.known(0, [_key(one), _key(two)], NOW) == [0, 0]
    await service.release(0, [one.fingerprint])
    assert await service.known(1, [_key(one)], NOW) == [0]
    service.worker_lost(0)  # killed between its two steps: its page will run again
    assert await service.known(1, [_key(two)], NOW) == [0]
    assert "dropped" not in caplog.text  # nobody was told MERGED meanwhile


async def test_a_promise_broken_after_others_were_told_merged_is_said_loudly(
    service: FrontierService, caplog: pytest.LogCaptureFixture
) -> None:
    page = Request("http://a.test/broken")
    await service.known(0, [_key(page)], NOW)
    await service.known(1, [_key(page)], NOW)
    with caplog.at_level(logging.WARNING, "skitter.multiproc"):
        await service.release(0, [page.fingerprint])
    assert "1 link(s) to task" in caplog.text


async def test_a_push_that_fails_releases_its_promises(service: FrontierService) -> None:
    page = Request("http://a.test/bad-bytes")
    await service.known(0, [_key(page)], NOW)
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the codec raises
        await service.push(0, [[*_key(page), b"not a request"]], NOW, None)
    assert await service.known(1, [_key(page)], NOW) == [0]


@pytest.fixture
async def remote(tmp_path: Path) -> AsyncIterator[tuple[RemoteFrontier, FrontierService]]:
    frontier = MemoryFrontier()
    service = FrontierService(frontier, None, 1)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await answer_calls(reader, Outbox(writer), lambda op, args: service.handle(0, op, args))
        writer.close()

    path = str(tmp_path / "f.sock")
    server = await asyncio.start_unix_server(serve, path)
    channel = await FrameChannel.connect(path)
    yield RemoteFrontier(channel), service
    await channel.close()
    server.close()
    await server.wait_closed()
    await frontier.close()


async def test_a_request_the_worker_cannot_encode_releases_its_key(
    remote: tuple[RemoteFrontier, FrontierService],
) -> None:
    frontier, service = remote
    unstorable = Request("http://a.test/x", meta={"handle": object()})
    with pytest.raises(CodecError):
        await frontier.push([unstorable], NOW)
    # The same page by a link that can be stored: queued, not taken for a repeat.
    assert await frontier.push([Request("http://a.test/x")], NOW) == [PushOutcome.NEW]
    assert service.decoded == 1
