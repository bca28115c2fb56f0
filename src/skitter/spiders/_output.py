"""What the generic spiders do with a callback's output before the engine sees it.

Two of Scrapy's rules need help in skitter:

- A request without a callback goes to Scrapy's ``Spider._parse``, which the generic
  spiders override (rules, feed nodes) while ``parse`` stays free for the user, even as
  a rule's callback. skitter's engine sends such a request to ``spider.parse``, so
  these spiders name their ``_parse`` on it explicitly (a method name, which the
  frontier stores as any other callback).
- ``process_results(response, results)`` is given the callback's results as one
  iterable; when a spider does not override it they stream through untouched, else an
  async callback's output is collected first, as Scrapy does.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from skitter.http import Request, Response
from skitter.items import is_item
from skitter.spider import aiter_output

__all__ = ["default_callback", "is_async", "iter_output", "overridden", "through_results"]


async def default_callback(output: Any, parse: Callable[..., Any]) -> AsyncIterator[Any]:
    """``output`` (anything a callback may return), with ``parse`` set as the callback
    of the requests that have none."""
    async for obj in aiter_output(output):
        if isinstance(obj, Request) and obj.callback is None:
            obj.callback = parse
        yield obj


def iter_output(output: Any, parse: Callable[..., Any]) -> Iterator[Any]:
    """``default_callback`` for the output of a plain (not async) callback, so a feed
    spider's ``parse_nodes``/``parse_rows`` stay plain generators, as in Scrapy."""
    if output is None:
        return
    if isinstance(output, Request | str | bytes) or is_item(output):
        output = (output,)
    for obj in output:
        if isinstance(obj, Request) and obj.callback is None:
            obj.callback = parse
        yield obj


def is_async(function: Any) -> bool:
    return inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)


async def through_results(
    output: Any,
    response: Response,
    process: Callable[[Response, Iterable[Any]], Any] | None,
) -> AsyncIterator[Any]:
    """``output`` passed through ``process`` (the spider's ``process_results``; None
    when it is the identity) and flattened."""
    if process is None:
        async for obj in aiter_output(output):
            yield obj
        return
    results = [obj async for obj in aiter_output(output)]
    async for obj in aiter_output(process(response, results)):
        yield obj


def overridden(spider: object, name: str, base: type) -> Callable[..., Any] | None:
    """The spider's method ``name`` when its class overrides ``base``'s, else None."""
    if getattr(type(spider), name) is getattr(base, name):
        return None
    method: Callable[..., Any] = getattr(spider, name)
    return method
