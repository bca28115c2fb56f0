"""DUPEFILTER_CLASS and REQUEST_FINGERPRINTER_CLASS in front of the frontier's merge."""

from __future__ import annotations

from typing import Any

from skitter import Spider
from skitter.crawler import Crawler
from skitter.dupefilters import BaseDupeFilter, RFPDupeFilter
from skitter.http import Request
from skitter.scheduler import Screen, scheduler_screen
from skitter.utils.request import RequestFingerprinter


class _Spider(Spider):
    name = "screen"


class _PathOnly:
    """A fingerprinter that ignores the query string."""

    def fingerprint(self, request: Request) -> bytes:
        return request.url.split("?")[0].encode()


class _OldFilter(BaseDupeFilter):
    """A filter built the pre-2.13 way, from settings."""

    built_from: Any = None

    @classmethod
    def from_settings(cls, settings: Any) -> _OldFilter:
        made = cls()
        made.built_from = settings
        return made


def _crawler(**settings: Any) -> Crawler:
    return Crawler(_Spider, settings)


def test_default_builds_no_screen() -> None:
    crawler = _crawler()
    assert type(crawler.request_fingerprinter) is RequestFingerprinter
    assert scheduler_screen(crawler, None) is None


def test_own_fingerprinter_makes_the_taskids() -> None:
    crawler = _crawler(REQUEST_FINGERPRINTER_CLASS=_PathOnly)
    screen = scheduler_screen(crawler, None)
    assert isinstance(crawler.request_fingerprinter, _PathOnly)
    assert screen is not None
    a, b = Request("http://a.example/p?x=1"), Request("http://a.example/p?x=2")
    named = Request("http://a.example/p?x=3", taskid="mine")
    assert screen.screened([a, b, named], None) == ([a, b, named], [False] * 3)
    assert a.taskid == b.taskid == b"http://a.example/p".hex()
    assert named.taskid == "mine"


def test_dupefilter_drops_what_it_has_seen_and_logs_it() -> None:
    crawler = _crawler(DUPEFILTER_CLASS="skitter.dupefilters.RFPDupeFilter")
    screen = scheduler_screen(crawler, None)
    assert screen is not None and isinstance(screen.dupefilter, RFPDupeFilter)
    first, again = Request("http://a.example/"), Request("http://a.example/")
    forced = Request("http://a.example/", dont_filter=True)
    outcomes: list[tuple[Request, bool]] = []
    assert screen.screened([first, again, forced], outcomes) == ([first, forced], [False, True])
    assert outcomes == [(again, False)]


def test_dupefilter_opens_and_closes_with_the_spider() -> None:
    calls: list[str] = []

    class Recording(BaseDupeFilter):
        def open(self) -> None:
            calls.append("open")

        def close(self, reason: str) -> None:
            calls.append(f"close {reason}")

    crawler = _crawler(DUPEFILTER_CLASS=Recording)
    scheduler_screen(crawler, None)
    from skitter.signals import spider_closed, spider_opened

    crawler.signals.send_catch_log(spider_opened, spider=None)
    crawler.signals.send_catch_log(spider_closed, spider=None, reason="finished")
    assert calls == ["open", "close finished"]


def test_a_filter_with_only_from_settings_is_built_from_them() -> None:
    crawler = _crawler(DUPEFILTER_CLASS=_OldFilter)
    screen = scheduler_screen(crawler, None)
    assert isinstance(screen, Screen) and isinstance(screen.dupefilter, _OldFilter)
    assert screen.dupefilter.built_from is crawler.settings
