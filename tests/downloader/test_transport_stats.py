"""TransportStats: the one writer of every transport's ``downloader/*`` counters."""

from __future__ import annotations

from skitter.downloader._transport import TransportStats
from skitter.engine import Stats
from skitter.exceptions import ConnectError
from skitter.http import Request, Response


def test_counts_requests_responses_and_errors_with_scrapys_keys() -> None:
    stats = Stats()
    counts = TransportStats(stats)
    get = Request("http://a.test/")
    post = Request("http://a.test/form", method="POST")
    for request in (get, get, post):
        counts.request(request)
    counts.response(Response("http://a.test/", 200, {}, b"12345", get))
    counts.response(Response("http://a.test/", 404, {}, b"", get))
    counts.exception(ConnectError("refused", request=post))
    assert stats.to_dict() == {
        "downloader/request_count": 3,
        "downloader/request_method_count/GET": 2,
        "downloader/request_method_count/POST": 1,
        "downloader/response_count": 2,
        "downloader/response_status_count/200": 1,
        "downloader/response_status_count/404": 1,
        "downloader/response_bytes": 5,
        "downloader/exception_count": 1,
        "downloader/exception_type_count/ConnectError": 1,
    }
