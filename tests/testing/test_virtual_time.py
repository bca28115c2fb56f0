"""VirtualTimeLoop: time jumps to the next timer when every task waits on one, and stands
still while something outside the loop (a server in another thread, a thread's work)
still owes an answer, so the client's own timeouts never fire early."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter.testing import VirtualTimeLoop, serve_app, virtual_clock

pytestmark = pytest.mark.virtual_time


def spy_on_real_waits(loop: VirtualTimeLoop) -> list[float | None]:
    """The timeouts of the real ``select()`` calls of ``loop`` from now on: a loop on
    virtual time that never waited for real took no real time, on any machine."""
    timeouts: list[float | None] = []
    real = loop._selector._real  # type: ignore[attr-defined]
    select = real.select

    def spy(timeout: float | None = None) -> Any:
        timeouts.append(timeout)
        return select(timeout)

    real.select = spy
    return timeouts


async def test_an_hour_of_sleeps_passes_in_no_real_time() -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    start = loop.time()
    fired: list[float] = []
    waits = spy_on_real_waits(loop)

    async def at(delay: float) -> None:
        await asyncio.sleep(delay)  # virtual
        fired.append(loop.time() - start)

    await asyncio.gather(*(at(d) for d in (3600.0, 0.5, 2.0, 0.5)))
    assert fired == [0.5, 0.5, 2.0, 3600.0]
    assert waits and set(waits) == {0}, "it only ever looked at its sockets, never waited"


async def test_the_clock_is_the_loops_time() -> None:
    clock = virtual_clock()
    before = clock.monotonic(), clock.time()
    await asyncio.sleep(7.25)  # virtual
    assert (clock.monotonic() - before[0], clock.time() - before[1]) == (7.25, 7.25)


async def test_a_local_servers_slow_page_arrives_at_its_virtual_time() -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(30)  # virtual: a slow page
        return web.Response(text="late")

    app = web.Application()
    app.router.add_get("/", slow)
    loop = asyncio.get_running_loop()
    async with serve_app(app) as base, aiohttp.ClientSession() as session:
        start = loop.time()
        async with session.get(base + "/", timeout=aiohttp.ClientTimeout(total=60)) as reply:
            assert await reply.text() == "late"
        assert loop.time() - start == 30.0
        start = loop.time()
        with pytest.raises(asyncio.TimeoutError):
            await session.get(base + "/", timeout=aiohttp.ClientTimeout(total=10))
        assert loop.time() - start == 10.0


@pytest.fixture
def late_echo() -> Iterator[tuple[str, int]]:
    """A server outside the loop (a thread, as another process would be): it answers
    each line 0.2 real seconds after it came."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                echo(conn)

    def echo(conn: socket.socket) -> None:
        conn.settimeout(0.1)
        while not stop.is_set():
            try:
                data = conn.recv(100)
            except TimeoutError:
                continue
            if not data:
                return
            stop.wait(0.2)  # the real latency of a peer outside the loop
            conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()
    stop.set()
    thread.join()
    server.close()


async def test_time_stands_still_while_a_reply_from_outside_is_owed(
    late_echo: tuple[str, int],
) -> None:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection(*late_echo)
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.01)  # virtual: a timer that must not fire
            ticks.append(loop.time())

    ticking = asyncio.create_task(ticker())
    start = loop.time()
    writer.write(b"ping\n")
    async with asyncio.timeout(0.05):  # 0.2 s of real latency is no time at all
        assert await reader.readline() == b"ping\n"
    assert loop.time() == start
    assert ticks == []  # no timer fired while the reply was owed
    ticking.cancel()
    writer.close()
    await writer.wait_closed()


async def test_time_stands_still_while_a_thread_works() -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    async with asyncio.timeout(0.01):
        await asyncio.to_thread(time.sleep, 0.1)
    assert loop.time() == start


def test_virtual_clock_is_refused_on_a_real_loop() -> None:
    async def main() -> None:
        virtual_clock()

    with pytest.raises(RuntimeError, match="VirtualTimeLoop"):
        asyncio.run(main())
