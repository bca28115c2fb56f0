"""Virtual time for whole crawls: an event loop whose clock jumps to its next timer.

A scheduling test asks "were the five requests to the slot sent at t=0, 2, 4, 6, 8?".
On the wall clock that takes 8 s and holds only within a tolerance a loaded machine
breaks; on virtual time it takes milliseconds and holds exactly. ``VirtualTimeLoop`` is
an ordinary selector event loop (real sockets, a real aiohttp server, a real
redis-server) whose ``time()`` is a number that stands still while the loop works and,
when every task waits on a timer, jumps straight to the earliest one. ``virtual_clock()``
is the same time as a ``Clock`` for the crawl (``Crawler(..., clock=virtual_clock())``),
so the scheduler's buckets, delays and leases and the loop's timers read one clock.

**When time may jump.** Only when nothing is ready to run *and* nothing outside the
loop owes it an answer; otherwise it waits for real, with its clock stopped:

- a socket connected to a server that this loop does not serve (redis-server, a server
  in another thread or process) that was written to and has not been readable since:
  its reply comes in real time, and jumping meanwhile would fire the client's own
  timeouts (a socket timeout, ``asyncio.timeout`` around a read) that never elapsed;
- a connect in progress, and work in the loop's executor (``run_in_executor``,
  ``getaddrinfo``, ``asyncio.to_thread``): threads end in real time too.

A socket to a server this loop serves (an aiohttp app on 127.0.0.1 started in the
test) needs no waiting: loopback delivers what one end writes before ``send`` returns,
so a non-blocking look (``select(0)``) finds it; if that finds nothing, the server's
handler is itself waiting, and when that is on a timer (``asyncio.sleep(2)`` for a slow
page), jumping is what the test wants. Not watched: TLS connections, pipes of
subprocesses and threads the loop did not start; a test on virtual time uses none of
them to reach something outside. A reply still owed after ``OUTSIDE_STALL`` real
seconds is an error, not a reason to jump.

**Why a loop of our own.** Three ways were weighed. ``FakeClock`` alone (moved by hand)
drives the scheduling cores but not a crawl: the engine, downloader and aiohttp wait on
loop timers, which a fake clock does not move. ``looptime`` (PyPI) patches a loop's
``time()`` and ``select()`` the same way, but by default jumps whenever no socket is
readable at that instant, and a redis-server that has not answered yet is exactly that:
its "idle" options trade that for real waits of a fixed step, so either timeouts fire
early or tests slow down; it also reaches into pytest-asyncio's loop handling, which
pytest-asyncio 1.x replaced by loop factories. A subclass of ``SelectorEventLoop`` of
about a hundred lines, with the one rule above (wait for what is owed from outside,
jump otherwise), runs real Redis round trips exactly and plugs into pytest-asyncio as a
loop factory (``loop_factories``).
"""

from __future__ import annotations

import asyncio
import math
import socket
import time

# The one private part of asyncio this relies on: the socket transport, whose writes
# and read events tell a reply owed from outside.
from asyncio.selector_events import _SelectorSocketTransport  # type: ignore[attr-defined]
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, TypeVar, TypeVarTuple

__all__ = ["OUTSIDE_STALL", "VirtualClock", "VirtualTimeLoop", "loop_factories", "virtual_clock"]

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

#: Real seconds a reply from outside may take before the loop calls it a hang.
OUTSIDE_STALL = 30.0
#: Real seconds of one wait for what is owed from outside (the clock stands still).
_OUTSIDE_POLL = 0.05
_WILDCARDS = ("0.0.0.0", "::", "")


class VirtualClock:
    """The ``Clock`` of a ``VirtualTimeLoop``: ``monotonic()`` is the loop's time."""

    __slots__ = ("_loop",)

    def __init__(self, loop: VirtualTimeLoop) -> None:
        self._loop = loop

    def monotonic(self) -> float:
        return self._loop.time()

    def time(self) -> float:
        return VirtualTimeLoop.EPOCH - VirtualTimeLoop.START + self._loop.time()


class _WatchedTransport(_SelectorSocketTransport):  # type: ignore[misc]
    """A client socket to a server outside the loop: owes a reply from each write until
    it is readable again (data or EOF)."""

    def write(self, data: Any) -> None:
        super().write(data)
        if data:
            self._loop._owed.add(self)

    def _read_ready(self) -> None:
        self._loop._owed.discard(self)
        super()._read_ready()

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        self._loop._owed.discard(self)
        super()._call_connection_lost(exc)


class _VirtualSelector:
    """The loop's selector, with ``select(timeout)`` on virtual time (see the module
    docstring); everything else is the real selector's."""

    def __init__(self, real: Any, loop: VirtualTimeLoop) -> None:
        self._real = real
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def select(self, timeout: float | None = None) -> list[Any]:
        events: list[Any] = self._real.select(0)
        if events or timeout == 0:
            return events
        loop = self._loop
        if loop.owed_from_outside():
            events = self._real.select(_OUTSIDE_POLL)
            loop._note_outside_wait(bool(events))
            return events
        if timeout is None or not loop._jump():  # no timer that can fire: only I/O
            return list(self._real.select(None))
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop on virtual time (see the module docstring)."""

    #: Where its time starts (a positive number, as FakeClock's: no code sees a zero it
    #: could take for "never"), and the epoch its clock's ``time()`` gives then.
    START = 1000.0
    EPOCH = 1_700_000_000.0

    def __init__(self) -> None:
        super().__init__()
        self._now = self.START
        self._owed: set[_WatchedTransport] = set()
        self._busy = 0  # connects in progress and executor jobs
        self._served: set[tuple[str, int]] = set()
        self._waited_since: float | None = None
        self._selector = _VirtualSelector(self._selector, self)  # type: ignore[has-type]
        #: The loop's time as a ``Clock``, for the crawl.
        self.clock = VirtualClock(self)

    def time(self) -> float:
        return self._now

    # -- what is owed from outside ----------------------------------------------------------
    def owed_from_outside(self) -> bool:
        """True while a reply, a connect or a thread's work is still to come."""
        return bool(self._busy or self._owed)

    def _note_outside_wait(self, answered: bool) -> None:
        now = time.monotonic()
        if answered or self._waited_since is None:
            self._waited_since = None if answered else now
            return
        if now - self._waited_since > OUTSIDE_STALL:
            peers = sorted(str(t.get_extra_info("peername")) for t in self._owed)
            raise RuntimeError(
                f"virtual time: nothing came from outside for {OUTSIDE_STALL:g} s "
                f"(owed by {', '.join(peers) or 'an executor job or a connect'})"
            )

    def _jump(self) -> bool:
        """Move the clock to the earliest timer (``_run_once`` dropped cancelled ones);
        False if there is none that can ever fire."""
        self._waited_since = None
        timers: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        if not timers or not math.isfinite(when := timers[0].when()):
            return False
        self._now = max(self._now, when)
        return True

    # -- hooks into the loop ----------------------------------------------------------------
    def _start_serving(self, protocol_factory: Any, sock: socket.socket, *a: Any, **kw: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host, port = sock.getsockname()[:2]
            self._served.add((host, port))
        return super()._start_serving(protocol_factory, sock, *a, **kw)  # type: ignore[misc]

    def _served_here(self, sock: socket.socket) -> bool:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return True  # a Unix socket or a socket pair: not a remote peer
        try:
            host, port = sock.getpeername()[:2]
        except OSError:
            return True
        return (host, port) in self._served or any((w, port) in self._served for w in _WILDCARDS)

    def _make_socket_transport(
        self,
        sock: socket.socket,
        protocol: Any,
        waiter: Any = None,
        *,
        extra: Any = None,
        server: Any = None,
    ) -> Any:
        if server is None and not self._served_here(sock):
            return _WatchedTransport(self, sock, protocol, waiter, extra, server)
        return super()._make_socket_transport(  # type: ignore[misc]
            sock, protocol, waiter, extra=extra, server=server
        )

    async def sock_connect(self, sock: socket.socket, address: Any) -> None:
        self._busy += 1
        try:
            await super().sock_connect(sock, address)
        finally:
            self._busy -= 1

    def run_in_executor(
        self, executor: Executor | None, func: Callable[[*_Ts], _T], *args: *_Ts
    ) -> asyncio.Future[_T]:
        future = super().run_in_executor(executor, func, *args)
        self._busy += 1
        future.add_done_callback(self._executor_done)
        return future

    def _executor_done(self, _: asyncio.Future[Any]) -> None:
        self._busy -= 1


def virtual_clock() -> VirtualClock:
    """The running loop's time as a ``Clock``; refused outside a ``VirtualTimeLoop`` (a
    crawl on the wall clock under a loop on virtual time would disagree with it)."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, VirtualTimeLoop):
        raise RuntimeError("virtual_clock() needs a VirtualTimeLoop (mark the test virtual_time)")
    return loop.clock


def loop_factories(marked: bool) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """For pytest-asyncio's ``pytest_asyncio_loop_factories`` hook: a test marked
    ``virtual_time`` runs on a ``VirtualTimeLoop``, any other on the policy's loop."""
    if marked:
        return {"virtual_time": VirtualTimeLoop}
    return {"asyncio": asyncio.new_event_loop}
