"""``skitter.dupefilters``: Scrapy's filter classes, for plug-ins that subclass them."""

from __future__ import annotations

from pathlib import Path

from skitter import Crawler, Spider
from skitter.dupefilters import BaseDupeFilter, RFPDupeFilter
from skitter.http import Request
from skitter.utils.request import fingerprint


class Shop(Spider):
    name = "shop"


def test_the_base_filter_lets_everything_through() -> None:
    seen = BaseDupeFilter.from_crawler(Crawler(Shop))
    assert not seen.request_seen(Request("http://a.example/"))
    assert not seen.request_seen(Request("http://a.example/"))


def test_rfp_filter_keys_requests_by_scrapys_fingerprint() -> None:
    seen = RFPDupeFilter()
    assert not seen.request_seen(Request("http://a.example/?b=2&a=1"))
    assert seen.request_seen(Request("http://a.example/?a=1&b=2"))  # the canonical URL
    assert not seen.request_seen(Request("http://a.example/", method="POST"))
    assert seen.fingerprints >= {fingerprint(Request("http://a.example/?a=1&b=2")).hex()}


def test_a_subclass_changes_the_key_as_scrapy_splash_does() -> None:
    class ByPath(RFPDupeFilter):
        def request_fingerprint(self, request: Request) -> str:
            return request.url.split("?")[0]

    seen = ByPath()
    assert not seen.request_seen(Request("http://a.example/p?x=1"))
    assert seen.request_seen(Request("http://a.example/p?x=2"))


def test_a_job_directory_remembers_what_was_seen(tmp_path: Path) -> None:
    crawler = Crawler(Shop, {"JOBDIR": str(tmp_path)})
    first = RFPDupeFilter.from_crawler(crawler)
    assert not first.request_seen(Request("http://a.example/1"))
    first.close("finished")
    again = RFPDupeFilter.from_crawler(crawler)
    assert again.request_seen(Request("http://a.example/1"))
    assert not again.request_seen(Request("http://a.example/2"))
    again.close("finished")
    assert len((tmp_path / "requests.seen").read_text().splitlines()) == 2


def test_scrapys_utils_url_gives_w3libs_canonicalize_url() -> None:
    """scrapy-splash and scrapy-deltafetch import it from ``scrapy.utils.url``."""
    from w3lib.url import canonicalize_url as w3libs

    from skitter.utils.url import canonicalize_url

    assert canonicalize_url is w3libs
