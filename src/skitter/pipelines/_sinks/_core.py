"""What every sink does around its database or broker: batches, back-pressure, outages.

Items are encoded as they arrive (``take``: a row or a message, with its identity) and
written by one writer task per sink, in batches of at most ``batch_size``, one
transaction (or one round of confirmed messages) each. A batch is written once
``batch_size`` items wait, or once the oldest has waited ``batch_delay`` seconds (0:
as soon as the previous write ends, so that items arriving during a write go together
in the next one).

The engine acknowledges a task only once its items are written: it awaits ``flush()``,
which returns when everything taken before the call is committed. At most twice
``batch_size`` items wait; ``take`` waits for room beyond that, so a sink slower than
the crawl slows the callbacks, and with them the crawl, instead of buffering without
bound.

A write that fails because the server cannot be reached (down, restarting, the
connection dropped) is tried again on a new connection (0.25 s, doubling to 5 s) for up
to ``outage_timeout`` seconds, the items held meanwhile; then, or at once for an error
waiting does not cure (a value the column refuses, a missing right), the sink is broken
for good: the items it held are counted lost (``sink/<name>/lost``; their tasks were
not acknowledged and run again on a resume), the waiting ``flush`` calls and every
later item get a ``StorageError`` (the crawl fails, exit status 1), and so does close.
Time is read on the injected clock (the loop's, on a ``VirtualTimeLoop``), so tests run
batches and outages on virtual time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter._secrets import mask_text
from skitter._tasks import Background
from skitter._types import StatsSink
from skitter.exceptions import ConfigError, StorageError
from skitter.items import item_to_dict
from skitter.pipelines._sinks._identity import declared_key, identity_text, key_values
from skitter.pipelines._sinks._options import SinkOptions

__all__ = ["Sink"]

log = logging.getLogger("skitter.sinks")

#: Seconds before the first new try of a batch the server did not take, doubling.
RETRY_FIRST, RETRY_MAX = 0.25, 5.0


class Sink:
    """One SINKS entry. Subclasses connect, encode and write; see the module docstring.

    A subclass implements ``connect`` (open the connection, check or create the
    target; ConfigError for what does not fit), ``encode`` (an item's record, at once:
    a value it cannot hold is a StorageError), ``write`` (one batch, committed when it
    returns), ``transient`` (whether an error is the server out of reach) and
    ``disconnect``.
    """

    def __init__(
        self,
        options: SinkOptions,
        *,
        stats: StatsSink | None = None,
        clock: Clock | None = None,
        spider_name: str = "",
    ) -> None:
        self.options = options
        self._stats = stats
        self._clock: Clock = clock or SystemClock()
        self._spider_name = spider_name
        self._classes = options.item_classes
        self._pending: list[Any] = []
        #: The batch the writer has in hand (being written, or waiting out an outage).
        self._in_hand: list[Any] = []
        self._first_at = 0.0
        self._taken = 0
        #: Items the server holds (as far as its replies said).
        self.written = 0
        self.lost_items = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._closing = False
        self._connected = False
        self._writer = Background("skitter-sink-writer")
        self._failure: str | None = None

    # -- what subclasses implement ------------------------------------------------------
    async def connect(self) -> None:
        raise NotImplementedError

    def encode(self, data: dict[str, Any], identity: Callable[[], str], item: Any) -> Any:
        raise NotImplementedError

    async def write(self, batch: list[Any]) -> None:
        raise NotImplementedError

    def transient(self, exc: BaseException) -> bool:
        raise NotImplementedError

    async def disconnect(self) -> None:
        raise NotImplementedError

    # -- the manager's face ---------------------------------------------------------------
    @property
    def failure(self) -> str | None:
        """Why the sink takes no more items, or None."""
        return self._failure

    @property
    def where(self) -> str:
        return f"sink {self.options.label} ({self.options.shown})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.where}>"

    async def open_spider(self, spider: Any) -> None:
        """Connect and check the target: ConfigError for one that does not fit, a
        StorageError for a server out of reach at the start."""
        try:
            await self.connect()
        except ConfigError:
            await self._disconnect_quietly()
            raise
        except Exception as exc:
            await self._disconnect_quietly()
            raise StorageError(f"{self.where}: cannot start: {_detail(exc)}") from None
        self._connected = True
        self._writer.start(self._write_batches())
        log.info("Writing items to %s", self.where)

    async def take(self, item: Any, origin: str | None) -> None:
        """Encode ``item`` and queue it for the next batch; waits while the queue is full.
        ``origin`` is where it came from (see ``_identity``)."""
        if self._failure is not None:
            raise StorageError(self._failure)
        if self._classes and not isinstance(item, self._classes):
            return
        data = item if item.__class__ is dict else item_to_dict(item)
        record = self.encode(data, lambda: self.identity(data, item, origin), item)
        while len(self._pending) >= 2 * self.options.batch_size and self._failure is None:
            self._room.clear()
            await self._room.wait()
        if self._failure is not None:
            raise StorageError(self._failure)
        if not self._pending:
            self._first_at = self._clock.monotonic()
        self._pending.append(record)
        self._taken += 1
        self._wake.set()

    def identity(self, data: dict[str, Any], item: Any, origin: str | None) -> str:
        """The item's identity as text (see ``_identity``)."""
        key = self.options.key or declared_key(type(item))
        values = key_values(data, key, self.where) if key else None
        return identity_text(values, f"{self._spider_name}/{origin}" if origin else None)

    async def flush(self) -> None:
        """Return once every item taken so far is written; StorageError if it is not."""
        if self._failure is not None:
            raise StorageError(self._failure)
        if self.written + self.lost_items >= self._taken:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((self._taken, waiter))
        self._wake.set()
        await waiter

    async def close_spider(self, spider: Any) -> None:
        """Write what is waiting and disconnect; StorageError if items were lost."""
        self._closing = True
        self._wake.set()
        try:
            await self._writer.join()
        finally:
            unwritten = len(self._in_hand) + len(self._pending)
            if unwritten:  # the writer was cancelled with them (its batch in hand too)
                log.error("%d items were not written to %s", unwritten, self.where)
                self._lose(unwritten)
                self._in_hand, self._pending = [], []
            await self._disconnect_quietly()
        if self._failure is not None:
            raise StorageError(self._failure)
        log.info("Wrote %d items to %s", self.written, self.where)

    # -- the writer -------------------------------------------------------------------
    async def _write_batches(self) -> None:
        try:
            await self._write_all()
        except Exception as exc:  # a bug here must not leave flush() waiting for ever
            self._break(exc, 0.0)

    async def _write_all(self) -> None:
        size = self.options.batch_size
        delay = self.options.batch_delay
        while self._failure is None:
            if not self._pending:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            if delay and len(self._pending) < size and not self._closing:
                left = self._first_at + delay - self._clock.monotonic()
                if left > 0:
                    self._wake.clear()
                    await self._wait_wake(left)
                    continue
            batch = self._pending[:size]
            del self._pending[:size]
            self._first_at = self._clock.monotonic()
            self._room.set()
            self._in_hand = batch
            if not await self._write_riding_out(batch):
                return
            self._in_hand = []
            self._committed(len(batch))

    async def _wait_wake(self, seconds: float) -> None:
        """Until an item arrives (or close), or ``seconds`` pass."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    async def _write_riding_out(self, batch: list[Any]) -> bool:
        """Write ``batch``, riding out an unreachable server for ``outage_timeout``;
        False once the sink is broken (the batch and the waiting items are lost)."""
        timeout = self.options.outage_timeout
        delay, since = RETRY_FIRST, None
        while True:
            try:
                if not self._connected:
                    await self.connect()
                    self._connected = True
                await self.write(batch)
            except Exception as exc:
                now = self._clock.monotonic()
                first, since = since is None, now if since is None else since
                waited = now - since
                if not self.transient(exc) or waited >= timeout:
                    self._break(exc, waited)
                    return False
                if first:
                    log.warning(
                        "%s cannot be reached (%s): holding %d items, trying again for up "
                        "to %g s (outage_timeout)",
                        self.where, _detail(exc), len(batch) + len(self._pending), timeout,
                    )  # fmt: skip
                self._count("retries")
                await self._disconnect_quietly()
                await asyncio.sleep(min(delay, timeout - waited))
                delay = min(delay * 2, RETRY_MAX)
                continue
            if since is not None:
                log.warning("%s is back after %.1f s", self.where, self._clock.monotonic() - since)
            return True

    def _committed(self, count: int) -> None:
        self.written += count
        self._count("written", count)
        self._count("batches")
        done = self.written + self.lost_items
        still = []
        for target, waiter in self._waiters:
            if target <= done:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still.append((target, waiter))
        self._waiters = still

    def _break(self, exc: Exception, waited: float) -> None:
        """The sink takes no more: the batch in hand and the waiting items are lost."""
        lost = len(self._in_hand) + len(self._pending)
        after = f" for {waited:.1f} s (outage_timeout)" if waited else ""
        self._failure = (
            f"{self.where}: cannot write items{after}: {_detail(exc)}; {lost} items not written"
        )
        self._lose(lost)
        self._in_hand, self._pending = [], []
        log.error("%s; it takes nothing more", self._failure)
        for _target, waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(StorageError(self._failure))
        self._waiters.clear()
        self._room.set()

    def _lose(self, count: int) -> None:
        if count:
            self.lost_items += count
            self._count("lost", count)

    def _count(self, what: str, count: int = 1) -> None:
        if self._stats is not None:
            self._stats.inc(f"sink/{self.options.label}/{what}", count)

    async def _disconnect_quietly(self) -> None:
        self._connected = False
        try:
            await self.disconnect()
        except Exception as exc:  # a broken connection is dropped all the same
            log.debug("closing %s: %s", self.where, _detail(exc))


def _detail(exc: BaseException) -> str:
    return mask_text(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
