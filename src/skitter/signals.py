"""Scrapy's signals, and the manager a crawl sends them through (``crawler.signals``).

Extensions, middlewares and spiders connect handlers the way Scrapy's documentation
shows::

    crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

A handler gets the signal's arguments as keywords (plus ``signal`` and ``sender``, the
crawler) and may declare only those it uses. It may be a coroutine function: the crawl
awaits it where it sends the signal. An exception in a handler is logged and counted
(``signals/errors``), never raised into the crawl; ``DontCloseSpider`` from a
``spider_idle`` handler keeps the spider open and ``CloseSpider`` closes it, as in
Scrapy. Any hashable object is a signal, so a project can define its own.

A signal nobody connected costs one set lookup where it would be sent: the engine
checks ``X in signals.live`` before building the arguments.

Where skitter differs: handlers are held by strong references (Scrapy's are weak), so a
lambda stays connected until disconnected; headers_received and bytes_received come
from the HTTP transport, not from rendered pages, and a handler cannot stop a download
(there is no ``StopDownload``); a retry the scheduler makes is the same task again, so
it is not a new request_scheduled (a request from ``get_retry_request`` is).
"""

from __future__ import annotations

from skitter._signalmanager import SignalManager

__all__ = [
    "SignalManager",
    "bytes_received",
    "engine_started",
    "engine_stopped",
    "feed_exporter_closed",
    "feed_slot_closed",
    "headers_received",
    "item_dropped",
    "item_error",
    "item_scraped",
    "request_dropped",
    "request_left_downloader",
    "request_reached_downloader",
    "request_scheduled",
    "response_downloaded",
    "response_received",
    "spider_closed",
    "spider_error",
    "spider_idle",
    "spider_opened",
]


class _Signal:
    """A named token: the name only makes logs readable."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<signal {self.name}>"


#: The crawl's engine has started, before any spider opens.
engine_started = _Signal("engine_started")
#: The engine has stopped: every spider of the crawl is closed.
engine_stopped = _Signal("engine_stopped")
#: A spider has opened: its components are built, no request is sent yet.
spider_opened = _Signal("spider_opened")
#: A spider has nothing queued or in flight; a handler may raise DontCloseSpider or schedule
#: requests to keep it open.
spider_idle = _Signal("spider_idle")
#: A spider has closed; the reason says why (finished, cancelled, closespider_*...).
spider_closed = _Signal("spider_closed")
#: A callback raised: the failure, the response it was given and the spider.
spider_error = _Signal("spider_error")
#: A new request reached the scheduler (a retry of a stored task is not a new one).
request_scheduled = _Signal("request_scheduled")
#: The scheduler turned a new request away: the duplicate filter had seen it.
request_dropped = _Signal("request_dropped")
#: A request enters the downloader's middleware chain.
request_reached_downloader = _Signal("request_reached_downloader")
#: A request leaves the downloader, downloaded or failed.
request_left_downloader = _Signal("request_left_downloader")
#: A response came back through the downloader middlewares, before the callback.
response_received = _Signal("response_received")
#: A response came off the transport, before the downloader middlewares.
response_downloaded = _Signal("response_downloaded")
#: The transport has a response's status and headers, before its body.
headers_received = _Signal("headers_received")
#: The transport read a chunk of a response's body.
bytes_received = _Signal("bytes_received")
#: An item passed every pipeline.
item_scraped = _Signal("item_scraped")
#: A pipeline dropped an item (DropItem); the exception is given.
item_dropped = _Signal("item_dropped")
#: A pipeline raised something other than DropItem for an item.
item_error = _Signal("item_error")
#: One feed (one URI of FEEDS) has been finished and stored.
feed_slot_closed = _Signal("feed_slot_closed")
#: Every feed of the crawl has been finished and stored.
feed_exporter_closed = _Signal("feed_exporter_closed")
