"""Items to RabbitMQ with aio-pika: at least once, the identity in ``message_id``.

``amqp://user:pass@host:5672/vhost?queue=items`` declares a durable queue and sends to
it; ``?exchange=items&routing_key=shop`` sends to an exchange that must exist. Messages
are persistent and sent with publisher confirms and ``mandatory``: a batch is written
once the broker confirmed every message of it, and a message no queue takes is an
error, not a silent drop. RabbitMQ keeps no record of what it received, so a batch sent
again after a lost confirm (or a task that ran again) is delivered again: consumers
deduplicate by ``message_id`` (also in the ``x-skitter-item-id`` header).
"""

from __future__ import annotations

import asyncio
from typing import Any

from skitter.exceptions import ConfigError
from skitter.pipelines._sinks._messages import MessageSink

__all__ = ["AmqpSink"]


class AmqpSink(MessageSink):
    """A RabbitMQ queue or exchange."""

    _connection: Any = None
    _exchange: Any = None
    _routing_key = ""

    async def connect(self) -> None:
        import aio_pika
        from aiormq.exceptions import ChannelClosed

        self._connection = await aio_pika.connect(self.options.connect, timeout=10)
        channel = await self._connection.channel(publisher_confirms=True, on_return_raises=True)
        extra = self.options.extra
        try:
            if extra.get("queue"):
                await channel.declare_queue(extra["queue"], durable=True)
                self._exchange, self._routing_key = channel.default_exchange, extra["queue"]
            else:
                self._exchange = await channel.get_exchange(extra["exchange"], ensure=True)
                self._routing_key = extra.get("routing_key", "")
        except ChannelClosed as exc:  # a queue declared otherwise, an exchange missing
            raise ConfigError(f"{self.where}: {exc}") from None

    async def write(self, batch: list[Any]) -> None:
        import aio_pika

        sends = [
            self._exchange.publish(
                aio_pika.Message(
                    body,
                    message_id=identity,
                    headers={"x-skitter-item-id": identity},
                    content_type="application/json",
                    delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                ),
                self._routing_key,
                mandatory=True,
                timeout=30,
            )
            for identity, body in batch
        ]
        await asyncio.gather(*sends)

    def transient(self, exc: BaseException) -> bool:
        from aiormq.exceptions import ChannelInvalidStateError

        return isinstance(exc, OSError | TimeoutError | ChannelInvalidStateError)

    async def disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()
