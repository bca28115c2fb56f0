"""Acks from concurrent tasks sharing one round trip.

A worker finishes many downloads in the same turn of the event loop; each ack is its own
fenced change, but one ``ack.lua`` call takes them all. ``AckBatcher.ack`` joins the
batch that the next flush sends; while a flush is out, acks that arrive meanwhile wait
for the next one. An error of the call (Redis down...) is raised by each waiting ack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from skitter._tasks import Background

__all__ = ["AckBatcher"]

#: Sends one batch: the flat ARGV tail (now, taskid, token, ...) and the header's time.
SendBatch = Callable[[float, list[Any]], Awaitable[list[Any]]]


class AckBatcher:
    def __init__(self, send: SendBatch) -> None:
        self._send = send
        # acks waiting for the next flush: (now, taskid, token, future)
        self._waiting: list[tuple[str, str, str, asyncio.Future[int]]] = []
        self._flusher = Background("skitter-ack-flush")

    async def ack(self, now: str, taskid: str, token: str) -> bool:
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((now, taskid, token, done))
        if not self._flusher.running:
            self._flusher.start(self._flush())
        return bool(await done)

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the acks of this turn of the loop join
        while self._waiting:
            batch, self._waiting = self._waiting, []
            args: list[Any] = []
            for now, taskid, token, _ in batch:
                args += (now, taskid, token)
            try:
                answers = await self._send(float(batch[-1][0]), args)
            except asyncio.CancelledError:
                for *_, done in batch:
                    done.cancel()
                raise
            except Exception as exc:  # each waiting ack raises it
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                continue
            for (*_, done), answer in zip(batch, answers, strict=True):
                if not done.done():
                    done.set_result(answer)

    async def close(self) -> None:
        """Wait for the flush that is out, if any."""
        await self._flusher.wait()
