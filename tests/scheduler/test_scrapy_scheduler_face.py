"""``skitter.core.scheduler``: Scrapy's scheduler API, for plug-ins written against it."""

from __future__ import annotations

from skitter.core.scheduler import BaseScheduler, Scheduler
from skitter.dupefilters import RFPDupeFilter
from skitter.http import Request
from skitter.utils.test import get_crawler


def test_requests_come_out_by_priority_then_in_order_without_duplicates() -> None:
    crawler = get_crawler()
    scheduler = Scheduler.from_crawler(crawler)
    assert isinstance(scheduler.df, RFPDupeFilter)  # DUPEFILTER_CLASS None: Scrapy's filter
    scheduler.open(None)
    assert scheduler.enqueue_request(Request("http://a.example/1"))
    assert scheduler.enqueue_request(Request("http://a.example/2", priority=5))
    assert not scheduler.enqueue_request(Request("http://a.example/1"))
    assert scheduler.enqueue_request(Request("http://a.example/1", dont_filter=True))
    assert len(scheduler) == 3
    urls = []
    while scheduler.has_pending_requests():
        request = scheduler.next_request()
        assert request is not None
        urls.append(request.url)
    assert urls == ["http://a.example/2", "http://a.example/1", "http://a.example/1"]
    assert scheduler.next_request() is None
    assert crawler.stats.get_value("scheduler/enqueued") == 3
    assert crawler.stats.get_value("scheduler/dequeued") == 3
    assert crawler.stats.get_value("dupefilter/filtered") is None  # no spider.crawler here
    scheduler.close("finished")


def test_any_class_with_the_three_methods_is_a_scheduler() -> None:
    class Mine:
        def has_pending_requests(self) -> bool:
            return False

        def enqueue_request(self, request: Request) -> bool:
            return True

        def next_request(self) -> Request | None:
            return None

    assert isinstance(Mine(), BaseScheduler)
    assert not isinstance(object(), BaseScheduler)
