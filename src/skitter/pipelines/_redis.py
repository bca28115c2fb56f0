"""Items to Redis: scrapy-redis's RedisPipeline, without pickle.

Workers of a distributed crawl write their items to one place, a Redis list (``RPUSH``,
read with ``LPOP``/``BLPOP``) or stream (``XADD``, one field ``item``; read with
``XREAD``/``XREADGROUP``), as JSON (orjson, the feeds' encoding: ``dumps_json``) or
msgpack (msgspec). Items become dicts with itemadapter, as in the feeds.

Round trips: items are buffered and sent in one round trip per flush (one RPUSH, or a
MULTI/EXEC of the XADDs and the trim): when ``FLUSH_ITEMS`` are waiting, when the event
loop turns (every item of every task that finished in that turn goes together), before
a worker acknowledges a task (``flush``, awaited by the engine: an acked task's items
are in Redis), and at close. A flush in progress is awaited by the next one, so items
arrive in order and no two flushes send the same item.

Outages: while Redis is out of reach (restarting, failing over, out of memory) the
batch is held and tried again (0.25 s, doubling to 5 s) for up to
``REDIS_ITEMS_OUTAGE_TIMEOUT`` seconds, as the frontier rides out its own outages: items
wait in the buffer, a full buffer holds up the tasks that add to it, and a worker
acknowledges nothing meanwhile. Then, or at once for an error that waiting does not
cure (a wrong type, a missing right), the pipeline is broken for good: the items it held
are counted lost (``redis_items/lost``, and taken back out of ``item_scraped_count`` by
the manager), every later item is refused with ``StorageError`` (a ``FatalError``: the
crawl fails and the task at hand is not acknowledged), and close raises it too. No item
is dropped silently: it is sent, counted lost, or its task is not acknowledged; an item
the format cannot encode (a NaN in JSON, an integer past 64 bits in msgpack) fails the
crawl the same way, as it does a feed. A batch
whose reply was lost may have been stored and is sent again (at least once).

``REDIS_ITEMS_MAXLEN`` keeps the newest N: ``LTRIM`` for a list, ``XTRIM MAXLEN ~``
for a stream (whole stream nodes, so it may hold a little more than N); what was trimmed
is counted in ``redis_items/trimmed``. The URL's password is never shown (``mask_url``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from skitter._clock import Clock, SystemClock
from skitter._secrets import authority_problem, mask_text, mask_url
from skitter._tasks import TaskSet
from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import ConfigError, StorageError
from skitter.items import item_to_dict
from skitter.pipelines._exporters import dumps_item_json, json_default
from skitter.settings import ItemSettings

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["REDIS_ITEMS_FORMATS", "REDIS_ITEMS_TYPES", "RedisPipeline"]

log = logging.getLogger("skitter.pipelines.redis")

FLUSH_ITEMS = 500
#: Seconds before the first new try of a batch Redis did not take, doubling up to the last.
RETRY_FIRST, RETRY_MAX = 0.25, 5.0
REDIS_ITEMS_TYPES = ("list", "stream")
_msgpack = msgspec.msgpack.Encoder(enc_hook=json_default)
REDIS_ITEMS_FORMATS: dict[str, Callable[[Any], bytes]] = {
    "json": dumps_item_json,
    "msgpack": _msgpack.encode,
}


def _choice(name: str, value: Any, choices: Any) -> str:
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"{name} must be one of {allowed}, not {value!r}")
    return str(value)


class RedisPipeline:
    """Sends every item to a Redis list or stream; see the module docstring."""

    #: scrapy-redis's serializer setting, read only to refuse it with what to set instead.
    declared_settings: ClassVar[tuple[str, ...]] = ("REDIS_ITEMS_SERIALIZER",)

    def __init__(
        self,
        url: str,
        *,
        key: str = "%(spider)s:items",
        kind: str = "list",
        format: str = "json",
        maxlen: int = 0,
        stats: StatsSink | None = None,
        flush_items: int = FLUSH_ITEMS,
        outage_timeout: float = 600.0,
        clock: Clock | None = None,
        cluster: bool = False,
        sentinel_master: str | None = None,
    ) -> None:
        self.kind = _choice("REDIS_ITEMS_TYPE", kind, REDIS_ITEMS_TYPES)
        self.format = _choice("REDIS_ITEMS_FORMAT", format, REDIS_ITEMS_FORMATS)
        if isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen < 0:
            raise ConfigError(f"REDIS_ITEMS_MAXLEN must be a whole number >= 0, not {maxlen!r}")
        if not isinstance(outage_timeout, int | float) or outage_timeout < 0:
            raise ConfigError(
                f"REDIS_ITEMS_OUTAGE_TIMEOUT must be seconds >= 0, not {outage_timeout!r}"
            )
        try:
            key % {"spider": "x"}
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(
                f"REDIS_ITEMS_KEY {key!r} is not a key pattern (only %(spider)s is known): {exc}"
            ) from None
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError(
                f"REDIS_ITEMS_URL must be a redis://, rediss:// or unix:// URL, not "
                f"{mask_url(url)!r}"
            )
        problem = authority_problem(url)
        if problem is not None:
            raise ConfigError(f"REDIS_ITEMS_URL {mask_url(url)!r}: {problem}")
        self.url = url
        #: How ``url`` is reached: a Redis Cluster node, a sentinel, or the node itself.
        self._deployment = (cluster, sentinel_master)
        self.key_pattern = key
        self.key = key
        self.maxlen = maxlen
        self._encode = REDIS_ITEMS_FORMATS[self.format]
        self._stats = stats
        self._flush_items = flush_items
        self._outage_timeout = float(outage_timeout)
        self._clock: Clock = clock or SystemClock()
        self._client: Redis | None = None
        self._buffer: list[bytes] = []
        #: The sending of the buffer, if any (see ``flush``), and the set that owns it.
        self._out: asyncio.Task[None] | None = None
        self._sending = TaskSet()
        self._kick: asyncio.Handle | None = None
        self._background = TaskSet()
        #: Items Redis holds (as far as its replies said), and items lost with a batch.
        self.sent = 0
        self.lost_items = 0
        self._failure: str | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> RedisPipeline:
        """From the REDIS_ITEMS_* settings; the URL defaults to a worker's ``--redis``."""
        settings = crawler.settings
        if settings.get("REDIS_ITEMS_SERIALIZER") is not None:
            raise ConfigError(
                "REDIS_ITEMS_SERIALIZER (scrapy-redis's) is not used: skitter sends items as "
                "JSON or msgpack, never pickled; set REDIS_ITEMS_FORMAT to 'json' or 'msgpack'"
            )
        own = settings.view(ItemSettings)
        url = own.redis_items_url
        cluster, sentinel_master = False, None
        if not url:  # the worker's own Redis, reached as the worker reaches it
            url = getattr(getattr(crawler, "cluster", None), "redis_url", None)
            cluster = bool(own.redis_cluster)
            sentinel_master = own.redis_sentinel_master or None
        if not url:
            raise ConfigError(
                "RedisPipeline needs a Redis: set REDIS_ITEMS_URL, or run it in a worker "
                "(skitter worker --redis URL)"
            )
        return cls(
            url,
            key=own.redis_items_key,
            kind=own.redis_items_type,
            format=own.redis_items_format,
            maxlen=own.redis_items_maxlen,
            outage_timeout=own.redis_items_outage_timeout,
            stats=crawler.stats,
            clock=getattr(crawler, "clock", None),
            cluster=cluster,
            sentinel_master=sentinel_master,
        )

    @property
    def failure(self) -> str | None:
        """Why the pipeline takes no more items (a batch Redis did not take), or None."""
        return self._failure

    @property
    def where(self) -> str:
        return f"Redis items {self.key!r} at {mask_url(self.url)}"

    def __repr__(self) -> str:
        return f"<RedisPipeline {self.kind} {self.format} {self.where}>"

    # -- pipeline face ----------------------------------------------------------------
    async def open_spider(self, spider: Any) -> None:
        """Connect and look at the key: credentials or rights Redis refuses, or a key of
        another type, are a ``ConfigError``; a Redis out of reach a ``StorageError``."""
        from skitter.redis import RedisTarget, bytes_client, classify

        self.key = self.key_pattern % {"spider": getattr(spider, "name", "") or ""}
        self._client, _owned = bytes_client(RedisTarget(self.url, *self._deployment))
        try:
            raw = await self._client.type(self.key)
            kind = raw.decode() if isinstance(raw, bytes) else str(raw)
        except Exception as exc:
            await self._close_client()
            found = classify(exc)
            if found is not None and found[0] == "refused":
                raise ConfigError(f"{self.where} {found[1]}: {_detail(exc)}") from None
            raise StorageError(f"{self.where}: cannot start: {_detail(exc)}") from None
        if kind not in ("none", self.kind):
            await self._close_client()
            raise ConfigError(f"{self.where} is a {kind}, not a {self.kind} (REDIS_ITEMS_TYPE)")
        log.info("Sending items to %s (%s, %s)", self.where, self.kind, self.format)

    async def process_item(self, item: Any, spider: Any) -> Any:
        if self._failure is not None:
            raise StorageError(self._failure)
        data = item if item.__class__ is dict else item_to_dict(item)
        try:
            self._buffer.append(self._encode(data))
        except Exception as exc:  # never an item left out with the crawl going on
            raise StorageError(
                f"RedisPipeline cannot encode a {type(item).__name__} item as {self.format}: "
                f"{type(exc).__name__}: {exc}; convert the value in an item pipeline"
            ) from exc
        if len(self._buffer) >= self._flush_items:
            await self.flush()
        elif self._kick is None:
            self._kick = asyncio.get_running_loop().call_soon(self._flush_soon)
        return item

    async def close_spider(self, spider: Any) -> None:
        """Send what is buffered and disconnect; StorageError if items were lost."""
        if self._kick is not None:
            self._kick.cancel()
            self._kick = None
        try:
            await self._background.wait()
            if self._client is not None and self._failure is None:
                await self.flush()
        finally:
            await self._sending.cancel()  # stopped only by a cancelled close
            if self._buffer:  # a failure or a cancellation left them unsent
                log.error("%d items were not sent to %s", len(self._buffer), self.where)
                self._lose(self._buffer)
            await self._close_client()
        if self._failure is not None:
            raise StorageError(self._failure)
        log.info("Sent %d items to %s", self.sent, self.where)

    # -- sending ----------------------------------------------------------------------
    def _flush_soon(self) -> None:
        self._kick = None
        if self._buffer and self._failure is None:
            self._background.spawn(self._flush_quietly())

    async def _flush_quietly(self) -> None:
        # Recorded in _failure: the next item, flush or close raises it.
        with contextlib.suppress(StorageError):
            await self.flush()

    async def flush(self) -> None:
        """Send every buffered item (in order, after any flush in progress); once this
        returns, Redis holds them. StorageError if it does not (or did not before).

        A batch once sent is not taken back: Redis may have stored it already, so putting
        it back in the buffer would send it twice. The sending is a task of its own that
        outlives a cancelled caller (an item's flush cancelled as the crawl ends); the
        next flush (the close's) waits for it, and only a cancelled close stops it."""
        out = self._out
        if (out is None or out.done()) and self._buffer and self._failure is None:
            self._out = out = self._sending.spawn(self._drain())
            out.add_done_callback(_retrieve)
        if out is not None and not out.done():
            await asyncio.shield(out)
        if self._failure is not None:
            raise StorageError(self._failure)

    async def _drain(self) -> None:
        """Send the buffer batch by batch until it is empty (see ``flush``)."""
        while self._buffer and self._failure is None:
            batch = self._buffer[: self._flush_items]
            del self._buffer[: len(batch)]
            try:
                await self._send(batch)
            except BaseException:  # a cancelled close: the batch is not known to be sent
                self._buffer[:0] = batch
                raise

    async def _send(self, batch: list[bytes]) -> None:
        assert self._client is not None
        from skitter.redis import classify

        delay, since = RETRY_FIRST, None
        timeout = self._outage_timeout
        while True:
            try:
                replies = await self._transaction(batch)
            except Exception as exc:
                found = classify(exc)
                now = self._clock.monotonic()
                first, since = since is None, now if since is None else since
                waited = now - since
                if found and found[0] == "unavailable" and (not timeout or waited < timeout):
                    if first:
                        log.warning(
                            "%s %s: holding the items, trying again for up to %s",
                            self.where,
                            found[1],
                            f"{timeout:g} s (REDIS_ITEMS_OUTAGE_TIMEOUT)" if timeout else "ever",
                        )
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RETRY_MAX)
                    continue
                after = f" for {waited:.1f} s" if waited else ""
                self._failure = f"{self.where}: cannot send items{after}: {_detail(exc)}"
                lost = len(batch) + len(self._buffer)
                self._lose(batch)
                self._lose(self._buffer)
                log.error("%s; %d items are lost, it takes nothing more", self._failure, lost)
                return
            if since is not None:
                log.warning("%s is back after %.1f s", self.where, self._clock.monotonic() - since)
            self._count(len(batch), replies)
            return

    async def _transaction(self, batch: list[bytes]) -> list[Any]:
        assert self._client is not None
        key, maxlen = self.key, self.maxlen
        # One RPUSH is atomic by itself; more commands go in MULTI/EXEC, all or none.
        pipe = self._client.pipeline(transaction=self.kind != "list" or bool(maxlen))
        if self.kind == "list":
            pipe.rpush(key, *batch)
            if maxlen:
                pipe.ltrim(key, -maxlen, -1)
        else:
            for data in batch:
                pipe.xadd(key, {"item": data})
            if maxlen:
                pipe.xtrim(key, maxlen=maxlen, approximate=True)
        return list(await pipe.execute())

    def _count(self, sent: int, replies: list[Any]) -> None:
        trimmed = 0
        if self.maxlen:
            trimmed = max(0, int(replies[0]) - self.maxlen) if self.kind == "list" else replies[-1]
        self.sent += sent
        if self._stats is not None:
            self._stats.inc("redis_items/sent", sent)
            if trimmed:
                self._stats.inc("redis_items/trimmed", int(trimmed))

    def _lose(self, batch: list[bytes]) -> None:
        lost = len(batch)
        batch.clear()
        if lost:
            self.lost_items += lost
            if self._stats is not None:
                self._stats.inc("redis_items/lost", lost)

    async def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.aclose()
            except Exception as exc:  # a broken connection is closed all the same
                log.debug("closing %s: %s", self.where, _detail(exc))


def _retrieve(sending: asyncio.Task[None]) -> None:
    """Mark a sending's error as seen: one whose caller was cancelled has no one to
    raise it to (a failure to send is kept in ``_failure`` for the next caller)."""
    if not sending.cancelled():
        sending.exception()


def _detail(exc: BaseException) -> str:
    return mask_text(str(exc) or type(exc).__name__)
