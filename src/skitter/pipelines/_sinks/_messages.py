"""What the broker sinks share: an item as one JSON message under its identity; and
the Redis Streams sink.

A message's body is the item as JSON (the feeds' encoding, NaN refused); its identity
travels with it (a header, a message id, a field), so a consumer can tell a message
sent twice. Whether the broker itself drops the second copy depends on it: JetStream
does (within its duplicate window), Redis Streams does here (a set of the identities
written, checked and added to in the same script as the ``XADD``), RabbitMQ cannot
(at least once: consumers deduplicate by ``message_id``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._exporters import dumps_item_json
from skitter.pipelines._sinks._core import Sink

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["MessageSink", "RedisStreamSink"]

#: KEYS[1] the stream, KEYS[2] the set of identities written; ARGV id, body, id, body...
_XADD_ONCE = """
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[1], '*', 'id', ARGV[i], 'item', ARGV[i + 1])
    added = added + 1
  end
end
return added
"""


class MessageSink(Sink):
    """A sink whose records are ``(identity, JSON body)``."""

    def encode(self, data: dict[str, Any], identity: Callable[[], str], item: Any) -> Any:
        try:
            body = dumps_item_json(data)
        except Exception as exc:
            raise StorageError(
                f"{self.where} cannot encode a {type(item).__name__} item as JSON: "
                f"{type(exc).__name__}: {exc}; convert the value in an item pipeline"
            ) from exc
        return identity(), body

    def duplicates(self, count: int) -> None:
        """Messages the broker recognised as sent before (and did not store again)."""
        if count:
            self._count("duplicates", count)


class RedisStreamSink(MessageSink):
    """A Redis stream (``redis://host:6379/0?stream=items``); the identities written are
    kept in the set ``<stream>:ids``, which makes the stream exactly once."""

    _client: Redis | None = None

    async def connect(self) -> None:
        from skitter.redis import bytes_client

        self._client, _owned = bytes_client(self.options.connect)
        kind = await self._client.type(self.options.target)
        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
        if kind not in ("none", "stream"):
            raise ConfigError(
                f"{self.where}: key {self.options.target!r} is a {kind}, not a stream"
            )
        self._script = self._client.register_script(_XADD_ONCE)

    async def write(self, batch: list[Any]) -> None:
        args: list[Any] = []
        for identity, body in batch:
            args += (identity, body)
        keys = [self.options.target, f"{self.options.target}:ids"]
        added = int(await self._script(keys=keys, args=args))
        self.duplicates(len(batch) - added)

    def transient(self, exc: BaseException) -> bool:
        from skitter.redis import classify

        found = classify(exc) if isinstance(exc, Exception) else None
        return found is not None and found[0] == "unavailable"

    async def disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
