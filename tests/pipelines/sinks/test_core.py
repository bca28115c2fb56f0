"""The sink's writer on virtual time: batches by size and by delay, back-pressure, an
outage ridden out and one that lasts past its bound, and flush as the ack's gate.

The backend here is a fake (a list, and a switch that makes writes fail as a server out
of reach does); the real servers are the other modules' subject. The tests run on
``VirtualTimeLoop``: time moves only when every task waits on a timer, so every instant
asserted is exact, whatever the machine's load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._sinks import Sink, parse_sinks
from skitter.settings import Settings
from skitter.testing import virtual_clock
from skitter.testing._context import DictStats

pytestmark = pytest.mark.virtual_time


class Down(ConnectionError):
    """What the fake server raises while it is down."""


class FakeSink(Sink):
    def __init__(self, options: Any, **kwargs: Any) -> None:
        super().__init__(options, stats=DictStats(), clock=virtual_clock(), **kwargs)
        self.batches: list[tuple[float, list[Any]]] = []
        self.down = False
        self.broken: Exception | None = None
        self.connects = 0

    async def connect(self) -> None:
        self.connects += 1
        if self.down:
            raise Down("connection refused")

    def encode(self, data: dict[str, Any], identity: Callable[[], str], item: Any) -> Any:
        return identity(), data

    async def write(self, batch: list[Any]) -> None:
        await asyncio.sleep(0)
        if self.broken is not None:
            raise self.broken
        if self.down:
            raise Down("connection reset")
        self.batches.append((now(), list(batch)))

    def transient(self, exc: BaseException) -> bool:
        return isinstance(exc, Down)

    async def disconnect(self) -> None:
        pass

    def numbers(self) -> list[list[int]]:
        return [[data["n"] for _identity, data in batch] for _at, batch in self.batches]


def now() -> float:
    return asyncio.get_running_loop().time()


def options(**given: Any) -> Any:
    settings = Settings(
        {"SINK_BATCH_SIZE": 10, "SINK_BATCH_DELAY": 0.0, "SINK_OUTAGE_TIMEOUT": 30.0}
    )
    return parse_sinks({"sqlite:x.db?table=t": given}, settings=settings)[0]


async def opened(**given: Any) -> FakeSink:
    sink = FakeSink(options(**given), spider_name="tree")
    await sink.open_spider(None)
    return sink


async def test_a_batch_is_written_when_full_and_the_rest_after_the_delay() -> None:
    sink = await opened(batch_size=4, batch_delay=2.0)
    start = now()
    for n in range(6):
        await sink.take({"n": n}, f"task/{n}")
    await sink.flush()
    assert sink.numbers() == [[0, 1, 2, 3], [4, 5]]
    # full: written at once; the rest once the oldest of it had waited 2 s
    assert [at - start for at, _batch in sink.batches] == [0.0, 2.0]
    await sink.close_spider(None)
    assert sink.written == 6


async def test_without_a_delay_items_that_arrive_during_a_write_go_together() -> None:
    sink = await opened(batch_size=100)
    start = now()
    await sink.take({"n": 0}, "t/0")
    for _ in range(3):
        await asyncio.sleep(0)  # the writer took item 0 and is writing it
    for n in range(1, 5):
        await sink.take({"n": n}, f"t/{n}")
    await sink.flush()
    assert sink.numbers() == [[0], [1, 2, 3, 4]]
    assert now() == start
    await sink.close_spider(None)


async def test_a_full_buffer_holds_take_until_a_batch_is_written() -> None:
    sink = await opened(batch_size=2)
    sink.down = True  # nothing is written: the buffer fills
    takes = []
    for n in range(8):
        takes.append(asyncio.ensure_future(sink.take({"n": n}, f"t/{n}")))
        await asyncio.sleep(0)
    await asyncio.sleep(5)  # virtual
    # the batch being tried (the first item: the writer took it alone, at once) and
    # twice batch_size waiting; the rest are held, and with them the callbacks that
    # yielded them (the crawl slows, nothing piles up)
    assert sum(take.done() for take in takes) == 1 + 2 * 2
    sink.down = False
    await asyncio.gather(*takes)
    await sink.close_spider(None)
    assert sink.written == 8
    assert sink._stats.get("sink/sqlite:t/written") == 8  # type: ignore[attr-defined]


async def test_flush_returns_only_once_its_items_are_written() -> None:
    sink = await opened(batch_size=10)
    sink.down = True
    await sink.take({"n": 1}, "t/1")
    flushed = asyncio.ensure_future(sink.flush())
    await asyncio.sleep(10)  # virtual
    assert not flushed.done()  # the server is down: the task is not acknowledged
    sink.down = False
    await flushed
    assert sink.numbers() == [[1]]
    await sink.close_spider(None)


async def test_an_outage_past_its_bound_breaks_the_sink_and_counts_the_items(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink = await opened(batch_size=3, outage_timeout=30)
    sink.down = True
    start = now()
    for n in range(5):
        await sink.take({"n": n}, f"t/{n}")
    with pytest.raises(StorageError, match=r"for 30\.0 s \(outage_timeout\).*5 items not written"):
        await sink.flush()
    assert now() - start == 30.0  # no later than its bound
    assert sink.lost_items == 5
    assert sink.failure is not None
    with pytest.raises(StorageError):
        await sink.take({"n": 9}, "t/9")
    with pytest.raises(StorageError):
        await sink.close_spider(None)
    assert "trying again for up to 30 s (outage_timeout)" in caplog.text


async def test_an_outage_within_its_bound_loses_nothing() -> None:
    sink = await opened(batch_size=3, outage_timeout=30)
    sink.down = True
    for n in range(5):
        await sink.take({"n": n}, f"t/{n}")
    await asyncio.sleep(20)  # virtual
    sink.down = False
    await sink.flush()
    assert sorted(n for batch in sink.numbers() for n in batch) == [0, 1, 2, 3, 4]
    await sink.close_spider(None)


async def test_a_close_cancelled_during_an_outage_counts_every_item_as_lost() -> None:
    """The writer, cancelled with a batch in hand (riding out an outage), counts that
    batch with the waiting items: written and lost always add up to what was taken."""
    sink = await opened(batch_size=3, outage_timeout=30)
    sink.down = True
    for n in range(5):
        await sink.take({"n": n}, f"t/{n}")
    closing = asyncio.ensure_future(sink.close_spider(None))
    await asyncio.sleep(10)  # virtual: inside the retries, the first batch in hand
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert (sink.written, sink.lost_items) == (0, 5)


async def test_an_error_waiting_cannot_cure_breaks_the_sink_at_once() -> None:
    sink = await opened()
    sink.broken = ValueError("value too long for type character varying(5)")
    start = now()
    await sink.take({"n": 1}, "t/1")
    with pytest.raises(StorageError, match="value too long"):
        await sink.flush()
    assert now() == start


async def test_the_identity_is_the_origin_or_the_declared_key() -> None:
    from dataclasses import dataclass, field

    @dataclass
    class Product:
        sku: str = field(metadata={"key": True})
        price: float = 0.0

    sink = await opened()
    await sink.take({"n": 1}, "abc/0")
    await sink.take(Product("X1", 2.0), "abc/1")
    await sink.take({"n": 2}, None)
    with pytest.raises(StorageError, match="no value for its key field 'sku'"):
        await sink.take(Product(None, 1.0), "abc/2")  # type: ignore[arg-type]
    await sink.close_spider(None)
    ids = [identity for _at, batch in sink.batches for identity, _data in batch]
    assert ids[:2] == ["tree/abc/0", "X1"]
    assert ids[2].startswith("once/")


def test_options_are_checked_before_the_crawl() -> None:
    settings = Settings(
        {"SINK_BATCH_SIZE": 10, "SINK_BATCH_DELAY": 0.0, "SINK_OUTAGE_TIMEOUT": 30.0}
    )
    bad = {
        "kafka://h/t": "no Kafka sink",
        "ftp://h/t": "unknown sink",
        "postgresql://u:hunter2@h/db": "give the 'table'",
        "postgresql://u:hunter2@h/db?table=t&batch_size=0": "'batch_size' must be a whole",
        "postgresql://u:hunter2@h/db?table=t&colour=red&bogus=1": None,  # the library's
        "sqlite:x.db?table=t&speed=1": "unknown option",
        "amqp://h/": "give a 'queue' or an 'exchange'",
        "nats://h?subject=s": "give the JetStream 'stream'",
        "sqlite:?table=t": "keeps its file in the job directory",
    }
    for uri, message in bad.items():
        if message is None:
            parsed = parse_sinks({uri: {}}, settings=settings)[0]
            assert parsed.connect.endswith("?colour=red&bogus=1")  # left for libpq to refuse
            continue
        with pytest.raises(ConfigError, match=message) as raised:
            parse_sinks({uri: {}}, settings=settings)
        assert "hunter2" not in str(raised.value)
    with pytest.raises(ConfigError, match="given both in the URI and in the options"):
        parse_sinks({"sqlite:x.db?table=t": {"table": "u"}}, settings=settings)
    with pytest.raises(ConfigError, match="unknown option"):
        parse_sinks({"sqlite:x.db?table=t": {"tabel": "u"}}, settings=settings)
    parsed = parse_sinks(
        {"sqlite:x.db": {"table": "%(name)s_items", "key": "sku, shop", "batch_delay": "0.5"}},
        settings=settings,
        spider_name="tree",
    )[0]
    assert (parsed.target, parsed.key, parsed.batch_delay) == ("tree_items", ("sku", "shop"), 0.5)
