"""The downloader middleware contract and onion, with Scrapy's hook names and meanings.

Each middleware (``DownloaderMiddleware``) may define any of (sync or async)::

    process_request(request, spider)  -> None | Response | Request
    process_response(request, response, spider) -> Response | Request
    process_exception(request, exception, spider) -> None | Response | Request

The chain is composed once (``compose``) into one coroutine a download that calls each
hook that exists in turn, and none for hooks a middleware lacks. Outcomes:

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
from typing import Any, NamedTuple, Protocol, TypeAlias, TypeVar, cast

from skitter._components import spider_optional
from skitter.exceptions import _InvalidOutput
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
    """``_find_hook``, called with the spider only when it takes one (``spider_optional``)."""
    fn, is_async = _find_hook(mw, name)
    if fn is None:
        return None, False
    return spider_optional(fn, 1 if name == "process_request" else 2), is_async


def _find_hook(mw: DownloaderMiddleware, name: str) -> tuple[Callable[..., Any] | None, bool]:
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


class _Layer(NamedTuple):
    """One middleware's hooks, looked up once per crawl (see ``_hook``)."""

    name: str
    on_request: Callable[..., Any] | None
    request_async: bool
    on_response: Callable[..., Any] | None
    response_async: bool
    on_exception: Callable[..., Any] | None
    exception_async: bool


def _layer(mw: DownloaderMiddleware) -> _Layer | None:
    """The hooks of ``mw``, or None when it has none (it costs a download nothing)."""
    on_request, request_async = _hook(mw, "process_request")
    on_response, response_async = _hook(mw, "process_response")
    on_exception, exception_async = _hook(mw, "process_exception")
    if on_request is None and on_response is None and on_exception is None:
        return None
    return _Layer(
        type(mw).__name__,
        on_request,
        request_async,
        on_response,
        response_async,
        on_exception,
        exception_async,
    )


def _run_chain(layers: tuple[_Layer, ...], inner: DownloadHandler, spider: Any) -> DownloadHandler:
    """The onion of ``layers`` around ``inner`` as one coroutine a download, not one per
    layer: the same outcomes as nesting a try block per middleware (an exception raised
    in layer k, or inside it, goes to k's ``process_exception``; one raised by k's
    ``process_response`` or its type check goes to the layer outside k)."""
    isawaitable = inspect.isawaitable

    async def handle(request: Request) -> DownloadResult:
        result: Any = None
        error: Exception | None = None
        k = 0
        for layer in layers:  # inward: process_request, outermost first
            hook = layer.on_request
            if hook is not None:
                try:
                    result = hook(request, spider)
                    if layer.request_async or (result is not None and isawaitable(result)):
                        result = await result
                except Exception as exc:
                    error = exc
                    break
                if result is not None:
                    if isinstance(result, Request):
                        return result  # schedule this instead: no process_response
                    break  # answered here: out through this layer's process_response
            k += 1
        else:
            k -= 1
            try:
                result = await inner(request)
            except Exception as exc:
                error = exc
        while k >= 0:  # outward: process_exception or process_response, innermost first
            layer = layers[k]
            k -= 1
            if error is not None:
                hook = layer.on_exception
                if hook is None:
                    continue
                try:
                    result = hook(request, error, spider)
                    if layer.exception_async or (result is not None and isawaitable(result)):
                        result = await result
                except Exception as exc:
                    if exc is not error and exc.__context__ is None:
                        exc.__context__ = error  # as raised while handling it
                    error = exc
                    continue
                if result is None:
                    continue  # not handled: on to the next layer out
                error = None
            if isinstance(result, Request):
                return result
            try:
                if not isinstance(result, Response):
                    raise _bad_result(layer, result)
                hook = layer.on_response
                if hook is not None:
                    result = hook(request, result, spider)
                    if layer.response_async or (
                        not isinstance(result, Response | Request) and isawaitable(result)
                    ):
                        result = await result
                    if isinstance(result, Request):
                        return result
                    if not isinstance(result, Response):
                        raise _bad_response_hook(layer, result)
            except Exception as exc:
                error = exc
        if error is not None:
            raise error
        return cast(DownloadResult, result)

    return handle


def _bad_result(layer: _Layer, result: Any) -> TypeError:
    return _InvalidOutput(
        f"{layer.name} returned {type(result).__name__}; expected None, a Response or a Request"
    )


def _bad_response_hook(layer: _Layer, out: Any) -> TypeError:
    return _InvalidOutput(
        f"{layer.name}.process_response returned {type(out).__name__}; "
        "expected a Response or a Request"
    )


def compose(
    middlewares: Sequence[DownloaderMiddleware], transport: DownloadHandler, spider: Any
) -> DownloadHandler:
    """Wrap ``transport`` in ``middlewares``; the first one is the outermost layer."""
    layers = tuple(layer for layer in map(_layer, middlewares) if layer is not None)
    if not layers:
        return transport
    return _run_chain(layers, transport, spider)
