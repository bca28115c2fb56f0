"""``skitter.extensions.throttle.AutoThrottle``: Scrapy's extension API on the scheduler's
AutoThrottle policy, adjusting the slots of an engine that has them."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest

from skitter.exceptions import NotConfigured
from skitter.extensions.throttle import AutoThrottle
from skitter.http import Request, Response
from skitter.utils.test import get_crawler


@dataclass
class _Slot:
    delay: float
    transferring: set[object] = field(default_factory=set)


@dataclass
class _Downloader:
    slots: dict[str, _Slot] = field(default_factory=dict)
    _delay: float = 0.0


@dataclass
class _Engine:
    downloader: _Downloader = field(default_factory=_Downloader)


def _opened(**settings: object) -> tuple[AutoThrottle, _Downloader]:
    crawler = get_crawler(settings_dict={"AUTOTHROTTLE_ENABLED": True, **settings})
    extension = AutoThrottle.from_crawler(crawler)
    engine = _Engine()
    crawler.engine = engine
    extension._spider_opened(None)
    return extension, engine.downloader


def _downloaded(extension: AutoThrottle, latency: float, status: int = 200) -> None:
    request = Request("http://127.0.0.1/", meta={"download_latency": latency, "download_slot": "s"})
    extension._response_downloaded(Response(request.url, status=status), request, None)


def test_off_unless_enabled_and_a_positive_target() -> None:
    with pytest.raises(NotConfigured):
        AutoThrottle.from_crawler(get_crawler(settings_dict={}))


def test_opening_starts_at_the_start_delay_never_below_download_delay() -> None:
    assert _opened(AUTOTHROTTLE_START_DELAY=3.0)[1]._delay == 3.0
    assert _opened(AUTOTHROTTLE_START_DELAY=3.0, DOWNLOAD_DELAY=4.0)[1]._delay == 4.0


def test_a_download_moves_the_slot_delay_halfway_to_the_target() -> None:
    extension, downloader = _opened(AUTOTHROTTLE_TARGET_CONCURRENCY=2.0)
    downloader.slots["s"] = _Slot(delay=1.0)
    _downloaded(extension, latency=1.0)  # target 0.5: halfway from 1.0
    assert downloader.slots["s"].delay == 0.75
    _downloaded(extension, latency=0.0, status=500)  # an error never lowers it
    assert downloader.slots["s"].delay == 0.75
    _downloaded(extension, latency=8.0)  # a slower server: up at once
    assert downloader.slots["s"].delay == 4.0


def test_the_debug_log_says_what_changed(caplog: pytest.LogCaptureFixture) -> None:
    extension, downloader = _opened(AUTOTHROTTLE_DEBUG=True)
    downloader.slots["s"] = _Slot(delay=2.0)
    with caplog.at_level(logging.INFO, logger="skitter.extensions.throttle"):
        _downloaded(extension, latency=1.0)
    assert "slot: s | conc: 0 | delay: 1500 ms (-500) | latency: 1000 ms" in caplog.text


def test_without_an_engine_with_slots_the_scheduler_throttles_alone() -> None:
    crawler = get_crawler(settings_dict={"AUTOTHROTTLE_ENABLED": True})
    extension = AutoThrottle.from_crawler(crawler)
    extension._spider_opened(None)  # skitter's engine: nothing to adjust here
    _downloaded(extension, latency=1.0)
    assert crawler.engine is None
