"""The spider middleware contract (Scrapy's hooks), apart from the chain that runs it.

``SpiderMiddlewareManager`` (``_middleware``) composes middlewares once per crawl; this
module states what a middleware may define. Every hook is optional, as in Scrapy, so
``SpiderMiddleware`` has no required members; the aliases below give each hook's shape
for a middleware that wants its methods checked.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any, Protocol

__all__ = ["InputHook", "OutputHook", "SpiderExceptionHook", "SpiderMiddleware", "StartHook"]

#: ``process_spider_input(response, spider)``: None to go on, or raise.
InputHook = Callable[[Any, Any], Any]
#: ``process_spider_output(response, result, spider)``: the objects to pass on; an async
#: generator (a sync one gets the output collected into a list first, as in Scrapy).
OutputHook = Callable[[Any, AsyncIterable[Any], Any], AsyncIterator[Any] | Iterable[Any]]
#: ``process_spider_exception(response, exception, spider)``: None to pass it on, or an
#: iterable of objects that replaces the rest of the output.
SpiderExceptionHook = Callable[[Any, BaseException, Any], Any]
#: ``process_start(start)``: an async generator over the start requests (Scrapy 2.13).
StartHook = Callable[[AsyncIterable[Any]], AsyncIterator[Any]]


class SpiderMiddleware(Protocol):
    """A spider middleware, between the engine and the spider's callbacks.

    The contract, per optional hook (sync or async unless said):

    - ``process_spider_input(response, spider)`` runs engine's side first (lowest order
      first) before the callback; None lets the response through, an exception goes to
      the request's errback and the ``process_spider_exception`` hooks.
    - ``process_spider_output(response, result, spider)`` runs spider's side first over
      what the callback yields; it returns (best: is an async generator yielding) the
      requests and items to pass on. ``process_spider_output_async`` is preferred when
      both exist (Scrapy's "universal" middleware).
    - ``process_spider_exception(response, exception, spider)`` is offered an exception
      raised by the callback or a later middleware's output hook: None passes it on, an
      iterable recovers (its objects go through the remaining output hooks).
      ``CloseSpider`` and ``FatalError`` are never offered.
    - ``process_start(start)`` (an async generator) or the older
      ``process_start_requests(start_requests, spider)`` wraps the start requests.
    - ``from_crawler(crawler)`` (a classmethod), if defined, builds the middleware;
      raising ``NotConfigured`` takes it out of the chain.

    Hooks are looked up once per crawl.
    """
