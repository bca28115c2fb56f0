"""ASYNCIO_EVENT_LOOP: the loop the synchronous entry points start (skitter._loop)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvloop

from skitter import Spider
from skitter._loop import loop_factory, run
from skitter.crawler import Crawler, CrawlerProcess, crawl
from skitter.exceptions import ConfigError

LOOPS: list[type] = []


class LoopSpider(Spider):
    """Notes the loop it runs on, and crawls nothing."""

    name = "loop"

    async def start(self) -> AsyncIterator[Any]:
        LOOPS.append(type(asyncio.get_running_loop()))
        return
        yield


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_auto_is_uvloop_when_installed_and_asyncio_turns_it_off() -> None:
    assert run(_loop_type()) is uvloop.Loop
    assert run(_loop_type(), "auto") is uvloop.Loop
    assert run(_loop_type(), "uvloop.Loop") is uvloop.Loop
    assert not issubclass(run(_loop_type(), "asyncio"), uvloop.Loop)
    assert not issubclass(run(_loop_type(), None), uvloop.Loop)


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    assert loop_factory("auto") is None
    with pytest.raises(ConfigError, match=r"skitter\[speed\]"):
        loop_factory("uvloop")


def test_an_unknown_loop_is_refused_when_the_crawler_is_made() -> None:
    with pytest.raises(ConfigError, match="ASYNCIO_EVENT_LOOP must be one of"):
        Crawler(LoopSpider, settings={"ASYNCIO_EVENT_LOOP": "trio"})
    coro = _loop_type()
    with pytest.raises(ConfigError):
        run(coro, "tornado")
    assert coro.cr_frame is None  # closed, not left to warn "never awaited"


@pytest.mark.parametrize(("setting", "expected"), [("auto", True), ("asyncio", False)])
def test_crawl_and_crawler_process_run_on_the_loop_the_setting_names(
    setting: str, expected: bool
) -> None:
    LOOPS.clear()
    settings = {"ASYNCIO_EVENT_LOOP": setting, "LOG_LEVEL": "WARNING", "STATS_DUMP": False}
    crawl(LoopSpider, settings)
    process = CrawlerProcess(settings, install_root_handler=False)
    process.crawl(LoopSpider)
    process.start()
    assert [issubclass(t, uvloop.Loop) for t in LOOPS] == [expected, expected]
