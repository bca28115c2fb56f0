"""The downloader middleware contract and onion, with Scrapy's hook names and meanings.

Each middleware (``DownloaderMiddleware``) may define any of (sync or async)::

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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

from skitter.http import Request, Response

__all__ = [
    "DownloadHandler",
    "DownloadResult",
    "DownloaderMiddleware",
    "ExceptionHook",
    "RequestHook",
    "ResponseHook",
    "compose",
]

T = TypeVar("T")
DownloadResult = Response | Request
DownloadHandler = Callable[[Request], Awaitable[DownloadResult]]
MaybeAwaitable: TypeAlias = T | Awaitable[T]
#: ``process_request(request, spider)``: None to go on, a Response to answer, a Request
#: to schedule instead.
RequestHook = Callable[[Request, Any], MaybeAwaitable[DownloadResult | None]]
#: ``process_response(request, response, spider)``: a Response (this one or another) or
#: a Request to schedule instead.
ResponseHook = Callable[[Request, Response, Any], MaybeAwaitable[DownloadResult]]
#: ``process_exception(request, exception, spider)``: None to let it travel outward, a
#: Response or Request to replace it.
ExceptionHook = Callable[[Request, Exception, Any], MaybeAwaitable[DownloadResult | None]]


class DownloaderMiddleware(Protocol):
    """A downloader middleware: Scrapy's contract.

    Every hook is optional, as in Scrapy: a middleware defines those it needs, so this
    Protocol has no required members and the hooks' shapes are ``RequestHook``,
    ``ResponseHook`` and ``ExceptionHook``; each may be a plain or an async function.
    The contract, per hook (see the module docstring for the order):

    - ``process_request(request, spider)`` runs outward-in, lowest order first. None
      lets the request go on inward; a Response short-circuits the download (it still
      travels out through every ``process_response``); a Request ends the chain and is
      scheduled instead. It may raise ``IgnoreRequest`` or ``RetryLater``.
    - ``process_response(request, response, spider)`` runs inward-out. It returns a
      Response (the same one or a new one) or a Request (a redirect).
    - ``process_exception(request, exception, spider)`` sees an exception raised further
      in. None re-raises it; a Response or Request replaces it.
    - ``from_crawler(crawler)`` (a classmethod), if defined, builds the middleware with
      the crawl's settings, stats and clock; raising ``NotConfigured`` takes it out.
    - ``bind_transport(fetch)``, skitter's own: given the part of the onion inside this
      middleware, for downloads of its own (robots.txt), always over HTTP.
    - ``bind_inner(fetch)``, skitter's own: the same part of the onion, ending at the
      Downloader's routing (a ``render=True`` request goes to the browser), for a
      middleware that sends a request again itself (AutoRenderMiddleware, sessions after
      a block, proxy pools when a proxy is down).

    Hooks are looked up once per crawl, so a middleware cannot add one later.
    """


def _hook(mw: DownloaderMiddleware, name: str) -> tuple[Callable[..., Any] | None, bool]:
    """The hook and whether it must be awaited, decided once per crawl so that the
    per-download path calls a sync hook directly, without a coroutine of its own.

    A coroutine ``<name>_async`` (Scrapy's convention, as ``process_spider_output_async``)
    is preferred: a middleware may then keep Scrapy's synchronous hook for code that
    calls it by hand, while the crawl awaits the async one (the HTTP cache's storage
    runs on threads there, never on the event loop)."""
    preferred = getattr(mw, f"{name}_async", None)
    if inspect.iscoroutinefunction(preferred):
        return preferred, True
    fn = getattr(mw, name, None)
    if not callable(fn):
        return None, False
    return fn, inspect.iscoroutinefunction(fn)


def _wrap(mw: DownloaderMiddleware, inner: DownloadHandler, spider: Any) -> DownloadHandler:
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


def compose(
    middlewares: Sequence[DownloaderMiddleware], transport: DownloadHandler, spider: Any
) -> DownloadHandler:
    """Wrap ``transport`` in ``middlewares``; the first one is the outermost layer."""
    handler = transport
    for mw in reversed(middlewares):
        handler = _wrap(mw, handler, spider)
    return handler
