"""The downloader middleware onion, with Scrapy's hook names and meanings.

Each middleware may define any of (sync or async)::

    process_request(request, spider)  -> None | Response | Request
    process_response(request, response, spider) -> Response | Request
    process_exception(request, exception, spider) -> None | Response | Request

The chain is composed once into nested async callables (``compose``), so a download
costs one call per hook that exists, and none for hooks a middleware lacks. Outcomes:

- ``process_request`` returning a Response short-circuits the download; the response
  still travels out through every ``process_response``. Returning a Request means
  "schedule this instead" and ends the chain.
- ``process_response`` returning a Request ends the chain the same way (redirects).
- ``process_exception`` returning None lets the exception travel outward; a Response
  or Request replaces it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from skitter.http import Request, Response

__all__ = ["DownloadHandler", "DownloadResult", "compose"]

DownloadResult = Response | Request
DownloadHandler = Callable[[Request], Awaitable[DownloadResult]]


def _hook(mw: Any, name: str) -> tuple[Callable[..., Any] | None, bool]:
    """The hook and whether it must be awaited, decided once per crawl so that the
    per-download path calls a sync hook directly, without a coroutine of its own."""
    fn = getattr(mw, name, None)
    if not callable(fn):
        return None, False
    return fn, inspect.iscoroutinefunction(fn)


def _wrap(mw: Any, inner: DownloadHandler, spider: Any) -> DownloadHandler:
    on_request, request_async = _hook(mw, "process_request")
    on_response, response_async = _hook(mw, "process_response")
    on_exception, exception_async = _hook(mw, "process_exception")
    if on_request is None and on_response is None and on_exception is None:
        return inner
    isawaitable = inspect.isawaitable

    async def handle(request: Request) -> DownloadResult:
        result: Any = None
        try:
            if on_request is not None:
                result = on_request(request, spider)
                if request_async or isawaitable(result):
                    result = await result
                if isinstance(result, Request):
                    return result
            if result is None:
                result = await inner(request)
        except Exception as exc:
            if on_exception is None:
                raise
            result = on_exception(request, exc, spider)
            if exception_async or isawaitable(result):
                result = await result
            if result is None:
                raise
        if isinstance(result, Request):
            return result
        if not isinstance(result, Response):
            raise TypeError(
                f"{type(mw).__name__} returned {type(result).__name__}; "
                "expected None, a Response or a Request"
            )
        if on_response is None:
            return result
        out = on_response(request, result, spider)
        if response_async or isawaitable(out):
            out = await out
        if not isinstance(out, Response | Request):
            raise TypeError(
                f"{type(mw).__name__}.process_response returned {type(out).__name__}; "
                "expected a Response or a Request"
            )
        return out

    return handle


def compose(middlewares: list[Any], transport: DownloadHandler, spider: Any) -> DownloadHandler:
    """Wrap ``transport`` in ``middlewares``; the first one is the outermost layer."""
    handler = transport
    for mw in reversed(middlewares):
        handler = _wrap(mw, handler, spider)
    return handler
