"""Items to NATS JetStream with nats-py: exactly once by message id.

``nats://host:4222?subject=items.%(name)s&stream=ITEMS``: each item is published on the
subject with its identity as ``Nats-Msg-Id``, and the stream drops a message whose id
it has seen within its duplicate window (``duplicate_window`` seconds when skitter
creates the stream, ``create``: true; 2 minutes by default): a batch sent again after a
lost ack, or a task that ran again within the window, is stored once. A batch is written
once JetStream acknowledged every message of it (stored on disk, as the stream is
configured). The stream must take the subject; a missing stream is refused at start
unless ``create`` is set.
"""

from __future__ import annotations

import asyncio
from typing import Any

from skitter.exceptions import ConfigError
from skitter.pipelines._sinks._messages import MessageSink

__all__ = ["NatsSink"]


async def _quiet(exc: Exception) -> None:
    """nats-py reports connection errors to a callback; the sink sees them as raised."""


class NatsSink(MessageSink):
    """A subject of a JetStream stream."""

    _nc: Any = None
    _js: Any = None

    async def connect(self) -> None:
        import nats
        from nats.js.errors import NotFoundError

        if "?" in self.options.connect:
            raise ConfigError(f"{self.where}: unknown option(s) in the URI")
        self._nc = await nats.connect(
            self.options.connect, connect_timeout=5, allow_reconnect=False,
            max_reconnect_attempts=0, error_cb=_quiet,
        )  # fmt: skip
        self._js = self._nc.jetstream()
        stream, subject = self.options.extra["stream"], self.options.target
        try:
            await self._js.stream_info(stream)
        except NotFoundError:
            if not self.options.create:
                raise ConfigError(
                    f"{self.where}: JetStream has no stream {stream!r}; create it, or set "
                    "'create': True"
                ) from None
            await self._js.add_stream(
                name=stream, subjects=[subject],
                duplicate_window=self.options.extra["duplicate_window"],
            )  # fmt: skip
        try:
            found = await self._js.find_stream_name_by_subject(subject)
        except NotFoundError:
            found = None
        if found != stream:
            raise ConfigError(f"{self.where}: stream {stream!r} does not take subject {subject!r}")

    async def write(self, batch: list[Any]) -> None:
        stream, subject = self.options.extra["stream"], self.options.target
        acks = await asyncio.gather(
            *(
                self._js.publish(subject, body, stream=stream, headers={"Nats-Msg-Id": identity})
                for identity, body in batch
            )
        )
        self.duplicates(sum(1 for ack in acks if ack.duplicate))

    def transient(self, exc: BaseException) -> bool:
        import nats.errors
        from nats.js.errors import ServiceUnavailableError

        return isinstance(
            exc,
            OSError | TimeoutError | nats.errors.ConnectionClosedError | nats.errors.NoServersError
            | nats.errors.TimeoutError | nats.errors.NoRespondersError
            | nats.errors.OutboundBufferLimitError | nats.errors.StaleConnectionError
            | ServiceUnavailableError,
        )  # fmt: skip

    async def disconnect(self) -> None:
        nc, self._nc = self._nc, None
        if nc is not None and not nc.is_closed:
            await nc.close()
