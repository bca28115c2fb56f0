"""A frontier served by another process of the same machine, over a Unix socket.

``skitter crawl --processes N`` runs one coordinator, which owns the job's real
frontier (SQLite in the job directory, or memory), and N worker processes, each with an
engine whose frontier is a ``RemoteFrontier``: every call is a frame on one socket, so
the workers keep the frontier contract of the one-process crawl (the contract suite
runs against it) without a server of their own.

Frames are a 4-byte big-endian length and a msgpack array of messages: a call is
``[id, op, *args]``, its reply ``[id, ok, value]`` (``ok`` False: ``value`` is the
error's text); a message with id 0 is a notice from the coordinator (``["stop"]``: drain
and end). Calls are pipelined (many may be in flight on the socket at once) and
batched: every message one side sends in one turn of its event loop goes out in one
frame (``Outbox``), so a worker's acks, pushes and leases of a turn cost one write and
one read on each side, whatever their number. Requests travel in the
codec the durable frontiers store them in (``http._codec``), so a request that cannot
be stored is refused here as it would be there; each with its task key, priority and
age, so that the coordinator drops a repeated link without decoding it
(``Frontier.plain_duplicate``).

A key the coordinator answers 0 is a promise that the push follows: until it does, a
push of that key from any page is told MERGED (concurrent pages link to the same new
pages); a push that will not follow says ``release``.

Settling calls (``ack``, ``nack``, ``mark_bad``) carry what ``extra`` returns for the
lease (the worker's items of that task): the coordinator stores them only once it has
accepted the attempt, so a worker killed before it settled a task leaves none behind.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from skitter._tasks import Background
from skitter.exceptions import FrontierUnavailable
from skitter.frontier._base import (
    Frontier,
    FrontierCounts,
    Lease,
    PushOutcome,
    TaskInfo,
    TaskState,
)
from skitter.http import Request
from skitter.http.wiring import decode_request, encode_request

__all__ = ["FrameChannel", "Outbox", "RemoteFrontier", "answer_calls", "read_frame", "write_frame"]

_LENGTH = struct.Struct(">I")
_encoder = msgspec.msgpack.Encoder(enc_hook=str)  # an item's odd value is written as text
_decoder = msgspec.msgpack.Decoder()


def write_frame(writer: asyncio.StreamWriter, messages: Sequence[Sequence[Any]]) -> None:
    """Queue one frame of ``messages`` on ``writer`` (nothing waits for the socket:
    the other side reads as fast as it can)."""
    body = _encoder.encode(messages)
    writer.write(_LENGTH.pack(len(body)) + body)


async def read_frame(reader: asyncio.StreamReader) -> list[list[Any]] | None:
    """The messages of the next frame, or None once the other side has closed the
    socket."""
    try:
        head = await reader.readexactly(4)
        body = await reader.readexactly(_LENGTH.unpack(head)[0])
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    messages: list[list[Any]] = _decoder.decode(body)
    return messages


class Outbox:
    """The messages for one socket, sent as one frame at the end of the event loop's
    turn: a frame and a system call for all of them instead of one each."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self._queue: list[Sequence[Any]] = []
        #: Frames written: what the batching saves is messages less these.
        self.frames = 0

    def send(self, message: Sequence[Any]) -> None:
        if not self._queue:
            asyncio.get_running_loop().call_soon(self.flush)
        self._queue.append(message)

    def flush(self) -> None:
        """Write what waits now (a socket being closed takes nothing more)."""
        batch, self._queue = self._queue, []
        if batch and not self.writer.is_closing():
            write_frame(self.writer, batch)
            self.frames += 1


async def answer_calls(
    reader: asyncio.StreamReader,
    outbox: Outbox,
    handle: Callable[[str, list[Any]], Awaitable[Any]],
    first: Sequence[list[Any]] = (),
) -> None:
    """Answer the calls read from ``reader`` (after those in ``first``) one after the
    other, in the order they were made, until the other side closes the socket: the
    serving end of ``FrameChannel``. An exception from ``handle`` is the call's error."""
    batch: Sequence[list[Any]] | None = first
    while batch is not None:
        for call_id, op, *args in batch:
            try:
                result = await handle(op, args)
            except Exception as exc:  # the caller hears why; the service goes on
                outbox.send([call_id, False, f"{type(exc).__name__}: {exc}"])
            else:
                outbox.send([call_id, True, result])
        batch = await read_frame(reader)


class FrameChannel:
    """The worker's end of the socket: pipelined calls, and notices from the other end.

    When the socket closes, every pending and later call raises ``FrontierUnavailable``
    and ``on_close`` runs once (a worker whose coordinator is gone has nothing to do)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_notice: Callable[[list[Any]], None] = lambda _: None,
        on_close: Callable[[], None] = lambda: None,
    ) -> None:
        self._reader, self._writer = reader, writer
        self._outbox = Outbox(writer)
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._on_notice, self._on_close = on_notice, on_close
        self._closed = False
        self._task = Background("skitter-frame-reader")
        self._task.start(self._read())

    @classmethod
    async def connect(cls, path: str, **hooks: Any) -> FrameChannel:
        reader, writer = await asyncio.open_unix_connection(path, limit=2**26)
        return cls(reader, writer, **hooks)

    async def call(self, op: str, *args: Any) -> Any:
        if self._closed:
            raise FrontierUnavailable("the coordinator is gone")
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        self._outbox.send([call_id, op, *args])
        return await future

    def post(self, op: str, *args: Any) -> None:
        """Send a call whose answer nobody waits for (it can be sent from a ``finally``
        of a cancelled task: nothing is awaited)."""
        if not self._closed:
            self._outbox.send([next(self._ids), op, *args])

    async def _read(self) -> None:
        while (batch := await read_frame(self._reader)) is not None:
            for message in batch:
                self._answered(message)
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(FrontierUnavailable("the coordinator is gone"))
        self._pending.clear()
        self._on_close()

    def _answered(self, message: list[Any]) -> None:
        call_id = message[0]
        if call_id == 0:
            self._on_notice(message[1:])
            return
        future = self._pending.pop(call_id, None)
        if future is None or future.done():
            return
        if message[1]:
            future.set_result(message[2])
        else:
            future.set_exception(RuntimeError(f"coordinator: {message[2]}"))

    async def close(self) -> None:
        self._outbox.flush()
        self._closed = True
        await self._task.stop()  # first: a socket we close is no coordinator gone
        self._writer.close()
        await asyncio.gather(self._writer.wait_closed(), return_exceptions=True)


def _info(row: list[Any] | None) -> TaskInfo | None:
    if row is None:
        return None
    taskid, url, state, retried, lastcrawltime, reason = row
    return TaskInfo(taskid, url, TaskState(state), retried, lastcrawltime, reason)


class RemoteFrontier(Frontier):
    """The frontier of a worker process: each call goes to the coordinator's.

    ``extra(lease)`` is sent with the call that settles ``lease`` (the worker's items
    of that task); ``spider`` resolves callbacks by name, as the durable frontiers do."""

    def __init__(
        self,
        channel: FrameChannel,
        spider: object | None = None,
        extra: Callable[[Lease], Any] = lambda _: None,
    ) -> None:
        self.channel = channel
        self._spider = spider
        self._extra = extra

    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        if force is not None and len(force) != len(requests):
            raise ValueError(f"{len(requests)} requests but {len(force)} force flags")
        for request in requests:  # InvalidURL names the request, and nothing is sent
            request.taskid  # noqa: B018
        keys = [
            [
                request.taskid if request.has_explicit_taskid else request.fingerprint,
                request.priority,
                request.age,
                request.itag is None and not (force and force[i]),
            ]
            for i, request in enumerate(requests)
        ]
        # Two steps: the keys first; only the requests the coordinator cannot drop as
        # plain repeats (most links are) are encoded and sent. A key answered 0 is
        # promised to come (the coordinator tells other pushers of it MERGED): if it
        # will not (an encoding refused, a cancel before the push is sent), say so.
        channel = self.channel
        try:
            outcomes: list[int] = await channel.call("known", keys, now)
        except asyncio.CancelledError:
            channel.post("release", [key[0] for key in keys if key[3]])
            raise
        todo = [i for i, outcome in enumerate(outcomes) if not outcome]
        if todo:
            spider = self._spider
            try:
                wire = [[*keys[i], encode_request(requests[i], spider)] for i in todo]
            except BaseException:
                channel.post("release", [keys[i][0] for i in todo if keys[i][3]])
                raise
            flags = [force[i] for i in todo] if force else None
            pushed = await channel.call("push", wire, now, flags)
            for i, outcome in zip(todo, pushed, strict=True):
                outcomes[i] = outcome
        return [PushOutcome(outcome) for outcome in outcomes]

    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        rows = await self.channel.call("lease", limit, now, lease_seconds)
        spider = self._spider
        return [
            Lease(taskid, decode_request(data, spider), retried, deadline, token)
            for taskid, data, retried, deadline, token in rows
        ]

    async def ack(self, lease: Lease, now: float) -> bool:
        return bool(await self.channel.call("ack", lease.token, now, self._extra(lease)))

    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        extra = self._extra(lease)
        return bool(await self.channel.call("nack", lease.token, now, retry_at, reason, extra))

    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        extra = self._extra(lease)
        return bool(await self.channel.call("bad", lease.token, now, reason, extra))

    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        updated = await self.channel.call(
            "renew", [lease.token for lease in leases], now, lease_seconds
        )
        for lease, deadline in zip(leases, updated, strict=True):
            if deadline is not None:
                lease.deadline = deadline
        return sum(deadline is not None for deadline in updated)

    async def reclaim_expired(self, now: float) -> int:
        return int(await self.channel.call("reclaim", now))

    async def counts(self, now: float) -> FrontierCounts:
        ready, delayed, processing = await self.channel.call("counts", now)
        return FrontierCounts(ready, delayed, processing)

    async def next_due(self) -> float | None:
        due: float | None = await self.channel.call("next_due")
        return due

    async def task(self, taskid: str) -> TaskInfo | None:
        return _info(await self.channel.call("task", taskid))

    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        rows = await self.channel.call("tasks", int(state), limit)
        return [info for row in rows if (info := _info(row)) is not None]

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return int(await self.channel.call("retry_failed", now, domain, reason))

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        return int(await self.channel.call("requeue_bad", now, domain, reason))

    async def close(self) -> None:
        """The channel belongs to the worker, which says goodbye on it first."""
