"""SignalManager on its own: Scrapy's connect, disconnect, send_catch_log(_async)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from skitter import signals
from skitter._failure import Failure
from skitter.engine import Stats
from skitter.exceptions import DontCloseSpider
from skitter.signals import SignalManager


def test_receivers_get_only_the_keywords_they_declare() -> None:
    manager = SignalManager(sender="the crawler")
    seen: list[Any] = []

    def none() -> str:
        seen.append("none")
        return "a"

    def some(spider: Any) -> str:
        seen.append(("some", spider))
        return "b"

    def every(**kwargs: Any) -> str:
        seen.append(("every", kwargs))
        return "c"

    for receiver in (none, some, every):
        manager.connect(receiver, signal=signals.spider_opened)
    results = manager.send_catch_log(signals.spider_opened, spider="S")
    assert results == [(none, "a"), (some, "b"), (every, "c")]
    assert seen == [
        "none",
        ("some", "S"),
        ("every", {"spider": "S", "signal": signals.spider_opened, "sender": "the crawler"}),
    ]


def test_a_receiver_connected_twice_is_called_once_and_disconnect_removes_it() -> None:
    manager = SignalManager()
    calls: list[int] = []

    def receiver() -> None:
        calls.append(1)

    manager.connect(receiver, signals.engine_started)
    manager.connect(receiver, signals.engine_started)
    manager.send_catch_log(signals.engine_started)
    assert calls == [1]
    assert signals.engine_started in manager.live
    manager.disconnect(receiver, signals.engine_started)
    manager.send_catch_log(signals.engine_started)
    assert calls == [1]
    assert signals.engine_started not in manager.live
    assert manager.receivers(signals.engine_started) == []


def test_bound_methods_disconnect_by_equality() -> None:
    class Ext:
        def __init__(self) -> None:
            self.calls = 0

        def on(self) -> None:
            self.calls += 1

    ext = Ext()
    manager = SignalManager()
    manager.connect(ext.on, signals.spider_idle)
    manager.disconnect(ext.on, signals.spider_idle)  # a new bound-method object
    manager.send_catch_log(signals.spider_idle)
    assert ext.calls == 0
    assert manager.live == set()


def test_disconnect_all() -> None:
    manager = SignalManager()
    manager.connect(lambda: None, signals.item_scraped)
    manager.connect(lambda: None, signals.item_scraped)
    manager.disconnect_all(signals.item_scraped)
    assert manager.send_catch_log(signals.item_scraped) == []
    assert manager.live == set()


def test_a_failing_receiver_is_logged_counted_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = Stats()
    manager = SignalManager(stats=stats)
    after: list[str] = []

    def broken() -> None:
        raise ValueError("broken handler")

    manager.connect(broken, signals.spider_closed)
    manager.connect(lambda: after.append("ran"), signals.spider_closed)
    with caplog.at_level(logging.ERROR, logger="skitter.signals"):
        results = manager.send_catch_log(signals.spider_closed)
    assert after == ["ran"]
    failure = results[0][1]
    assert isinstance(failure, Failure)
    assert failure.check(ValueError) is ValueError
    assert "Error caught on signal handler" in caplog.text
    assert "broken handler" in caplog.text
    assert stats.get("signals/errors") == 1


def test_dont_log_exceptions_are_returned_but_neither_logged_nor_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = Stats()
    manager = SignalManager(stats=stats)

    def keep_open() -> None:
        raise DontCloseSpider

    manager.connect(keep_open, signals.spider_idle)
    with caplog.at_level(logging.ERROR):
        [(_, result)] = manager.send_catch_log(signals.spider_idle, dont_log=DontCloseSpider)
    assert isinstance(result, Failure) and result.check(DontCloseSpider)
    assert caplog.text == ""
    assert stats.get("signals/errors") is None


def test_any_hashable_object_is_a_signal() -> None:
    mine = object()
    manager = SignalManager()
    manager.connect(lambda value: value * 2, mine)
    assert [result for _, result in manager.send_catch_log(mine, value=21)] == [42]


async def test_send_catch_log_async_awaits_async_receivers_together() -> None:
    manager = SignalManager()
    order: list[str] = []
    first_started = asyncio.Event()

    async def first() -> str:
        order.append("first starts")
        first_started.set()
        await asyncio.sleep(0.01)  # a handler that takes time, so that the next one overlaps it
        order.append("first ends")
        return "one"

    async def second() -> str:
        await first_started.wait()  # would hang if the receivers ran one after the other
        order.append("second")
        return "two"

    def plain() -> str:
        return "three"

    async def broken() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("async failure")

    for receiver in (first, second, plain, broken):
        manager.connect(receiver, signals.item_scraped)
    results = await manager.send_catch_log_async(signals.item_scraped, item={})
    assert [r for _, r in results][:3] == ["one", "two", "three"]
    assert isinstance(results[3][1], Failure)
    assert results[3][1].getErrorMessage() == "async failure"
    assert order == ["first starts", "second", "first ends"]


async def test_send_catch_log_runs_a_coroutine_receiver_as_a_task() -> None:
    manager = SignalManager()
    done = asyncio.Event()

    async def receiver() -> None:
        done.set()

    manager.connect(receiver, signals.engine_started)
    [(_, task)] = manager.send_catch_log(signals.engine_started)
    assert isinstance(task, asyncio.Task)
    await asyncio.wait_for(done.wait(), 5)


def test_an_uncallable_receiver_is_refused() -> None:
    with pytest.raises(TypeError, match="callable"):
        SignalManager().connect("not a function", signals.engine_started)  # type: ignore[arg-type]
