"""The spider middleware chain, with Scrapy's hook names, order and meanings.

A spider middleware sits between the engine and the spider's callbacks. Each may define
any of these hooks, sync or async::

    process_spider_input(response, spider) -> None, or raise
    process_spider_output(response, result, spider) -> iterable of requests and items
    process_spider_exception(response, exception, spider) -> None, or an iterable
    process_start_requests(start_requests, spider) -> iterable of requests
    process_start(start) -> async iterable of requests (Scrapy 2.13's name)

Order, as in Scrapy: ``process_spider_input`` runs from the lowest order number up (the
engine's side first); the other hooks run from the highest down (the spider's side
first). ``process_spider_output`` should be an async generator; a plain function or
generator gets the upstream output collected into a list first, as Scrapy does for old
middlewares (``process_spider_output_async``, Scrapy's name for the async twin of a
"universal" middleware, is preferred when present).

Exceptions follow Scrapy's routing. One raised while iterating the callback's output is
offered to every ``process_spider_exception``, spider's side first; one raised by a
middleware's ``process_spider_output`` is offered only to the middlewares after it. The
first hook that returns an iterable recovers: its output goes through the
``process_spider_output`` of the middlewares after it and is yielded once the rest of the
output is done. An exception no hook recovers leaves ``process_output``; it is marked as
offered, so handing it to ``process_exception`` again is a no-op. ``CloseSpider`` and a
``FatalError`` are never offered: a middleware must not be able to swallow the end of a
crawl.

The chain is composed once per response from stages prepared once per crawl; guards
that catch exceptions are only inserted where some later middleware could handle one.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any, TypeGuard, overload

from skitter._components import build_components, spider_optional
from skitter._types import CrawlContext
from skitter.exceptions import CloseSpider, FatalError, _InvalidOutput
from skitter.http import Request
from skitter.items import is_item
from skitter.settings import SpiderSettings
from skitter.settings.wiring import register_base_table
from skitter.spider._callback_output import _from_iterable, aiter_output
from skitter.spider._protocol import InputHook, SpiderExceptionHook, SpiderMiddleware, StartHook

__all__ = ["SPIDER_MIDDLEWARES_BASE", "RequestFilter", "SpiderMiddlewareManager", "aiter_output"]

log = logging.getLogger("skitter.spider.middlewares")

_BUILTINS = "skitter.spider._builtin_middlewares"
#: The built-in spider middlewares and their orders (Scrapy's numbers). Disable one with
#: ``SPIDER_MIDDLEWARES = {"<its path here>": None}``.
SPIDER_MIDDLEWARES_BASE: dict[str, int] = {
    f"{_BUILTINS}.HttpErrorMiddleware": 50,
    f"{_BUILTINS}.OffsiteMiddleware": 500,
    f"{_BUILTINS}.RefererMiddleware": 700,
    f"{_BUILTINS}.UrlLengthMiddleware": 800,
    f"{_BUILTINS}.DepthMiddleware": 900,
}
register_base_table("SPIDER_MIDDLEWARES_BASE", SPIDER_MIDDLEWARES_BASE)

_OFFERED = "_skitter_offered_to_spider_middlewares"

Stage = Callable[[Any, AsyncIterable[Any]], AsyncIterator[Any]]


# -- adapting hooks -----------------------------------------------------------------------
def _mw_name(mw: SpiderMiddleware) -> str:
    return type(mw).__name__


def _as_async(result: Any, where: str) -> AsyncIterator[Any]:
    """The async iterator a hook's returned iterable stands for; TypeError otherwise."""
    if hasattr(result, "__aiter__"):
        return aiter(result)
    if isinstance(result, Iterable) and not isinstance(result, str | bytes | dict):
        return _from_iterable(result)
    raise _InvalidOutput(f"{where} returned {type(result).__name__}; expected an iterable")


def _output_stage(mw: SpiderMiddleware, spider: Any) -> Stage | None:
    hook = getattr(mw, "process_spider_output_async", None)
    if not callable(hook):
        hook = getattr(mw, "process_spider_output", None)
    if not callable(hook):
        return None
    call = spider_optional(hook, 2)
    if inspect.isasyncgenfunction(hook):
        return lambda response, upstream: call(response, upstream, spider)
    where = f"{_mw_name(mw)}.process_spider_output"

    async def collected(response: Any, upstream: AsyncIterable[Any]) -> AsyncIterator[Any]:
        # A sync middleware expects a sync iterable: Scrapy collects the output first.
        objects = [obj async for obj in upstream]
        result = call(response, objects, spider)
        if inspect.isawaitable(result):
            result = await result
        async for obj in _as_async(result, where):
            yield obj

    return collected


def _start_stage(mw: SpiderMiddleware, spider: Any) -> StartHook:
    modern: StartHook | None = getattr(mw, "process_start", None)
    if callable(modern):
        if not inspect.isasyncgenfunction(modern):
            raise TypeError(f"{_mw_name(mw)}.process_start must be an async generator")
        return modern
    # The caller checked that one of the two start hooks exists.
    found: Callable[..., Any] = getattr(mw, "process_start_requests")  # noqa: B009
    hook = spider_optional(found, 1)
    if inspect.isasyncgenfunction(found):
        return lambda start: hook(start, spider)
    where = f"{_mw_name(mw)}.process_start_requests"

    async def collected(start: AsyncIterable[Any]) -> AsyncIterator[Any]:
        log.warning(
            "%s is not an async generator: every start request is loaded into memory "
            "before it runs; write it as `async def` to keep them lazy",
            where,
        )
        requests = [obj async for obj in start]
        async for obj in _as_async(hook(requests, spider), where):
            yield obj

    return collected


def _mark_offered(exc: BaseException) -> None:
    # An exception class without __dict__ cannot be marked: it may be offered twice.
    with contextlib.suppress(AttributeError):
        setattr(exc, _OFFERED, True)


RequestCheck = Callable[[Request], Request | None]


class RequestFilter:
    """Base for a spider middleware that judges each yielded request on its own.

    Subclasses implement ``request_filter(response, spider)``, returning a function that
    takes a Request and returns it (possibly changed) or None to drop it; or None when
    nothing is to be done for this response. Items pass untouched. The manager fuses
    neighbouring filters into one pass over the callback's output, so a chain of them
    costs one async-generator step per object instead of one per middleware; the
    inherited ``process_spider_output`` keeps each usable on its own, Scrapy-style.
    """

    def request_filter(self, response: Any, spider: Any) -> RequestCheck | None:
        raise NotImplementedError

    @overload
    def process_spider_output(
        self, response: Any, result: AsyncIterable[Any], spider: Any = None
    ) -> AsyncIterator[Any]: ...

    @overload
    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]: ...

    def process_spider_output(
        self, response: Any, result: AsyncIterable[Any] | Iterable[Any], spider: Any = None
    ) -> AsyncIterator[Any] | Iterator[Any]:
        """The output filtered, of the kind it came in: an async iterable (skitter's
        chain) gives an async generator, a list (code and tests written for Scrapy's
        sync hook) a plain one; ``spider`` is optional, as in Scrapy 2.13."""
        check = self.request_filter(response, spider)
        if isinstance(result, AsyncIterable):
            return _checked_async(check, result)
        return _checked(check, result)


async def _checked_async(
    check: RequestCheck | None, result: AsyncIterable[Any]
) -> AsyncIterator[Any]:
    async for obj in result:
        if check is not None and isinstance(obj, Request):
            obj = check(obj)
            if obj is None:
                continue
        yield obj


def _checked(check: RequestCheck | None, result: Iterable[Any]) -> Iterator[Any]:
    for obj in result:
        if check is not None and isinstance(obj, Request):
            obj = check(obj)
            if obj is None:
                continue
        yield obj


def _is_pure_filter(mw: SpiderMiddleware) -> TypeGuard[RequestFilter]:
    """A RequestFilter whose output hook is the inherited one (so fusing it is exact)."""
    return (
        isinstance(mw, RequestFilter)
        and type(mw).process_spider_output is RequestFilter.process_spider_output
        and not callable(getattr(mw, "process_spider_output_async", None))
    )


def _filter_stage(filters: list[RequestFilter], spider: Any) -> Stage:
    def stage(response: Any, upstream: AsyncIterable[Any]) -> AsyncIterator[Any]:
        checks = [c for c in (f.request_filter(response, spider) for f in filters) if c]
        if not checks:
            return aiter(upstream)
        return _apply_checks(checks, upstream)

    return stage


def _plain_iterable(result: Any) -> bool:
    """True where ``aiter_output`` would wrap ``result`` in ``_from_iterable``."""
    if result is None or isinstance(result, Request | str | bytes | bytearray) or is_item(result):
        return False
    return not (hasattr(result, "__aiter__") or inspect.isawaitable(result)) and isinstance(
        result, Iterable
    )


async def _checked_iterable(
    checks: list[RequestCheck], iterable: Iterable[Any]
) -> AsyncIterator[Any]:
    """``_apply_checks`` over ``_from_iterable`` as one async generator (one step a object)."""
    for obj in iterable:
        if checks and isinstance(obj, Request):
            for check in checks:
                obj = check(obj)
                if obj is None:
                    break
        if obj is not None:  # a None yielded is skipped by the scraper anyway
            yield obj


async def _apply_checks(
    checks: list[RequestCheck], upstream: AsyncIterable[Any]
) -> AsyncIterator[Any]:
    async for obj in upstream:
        if isinstance(obj, Request):
            for check in checks:
                obj = check(obj)
                if obj is None:
                    break
            else:
                yield obj
            continue
        yield obj


class SpiderMiddlewareManager:
    """The spider middlewares of one crawl, composed once.

    ``middlewares`` are in ascending order (the engine's side first), as
    ``build_components`` returns them.
    """

    def __init__(self, middlewares: Sequence[SpiderMiddleware], spider: Any) -> None:
        self.middlewares = list(middlewares)
        self.spider = spider
        self._input: list[tuple[str, InputHook, bool]] = []
        for mw in self.middlewares:
            hook = getattr(mw, "process_spider_input", None)
            if callable(hook):
                name = f"{_mw_name(mw)}.process_spider_input"
                call = spider_optional(hook, 1)
                self._input.append((name, call, inspect.iscoroutinefunction(hook)))
        # Positions count from the spider's side: position 0 is the highest order.
        self._outputs: list[tuple[int, Stage]] = []
        self._handlers: list[tuple[int, str, SpiderExceptionHook]] = []
        self._starts: list[StartHook] = []
        group: list[RequestFilter] = []
        groups: list[list[RequestFilter]] = []
        for pos, mw in enumerate(reversed(self.middlewares)):
            if _is_pure_filter(mw):
                # Consecutive filters become one stage, placed at the last one's position.
                group.append(mw)
                if pos + 1 < len(self.middlewares) and _is_pure_filter(self.middlewares[-pos - 2]):
                    continue
                self._outputs.append((pos, _filter_stage(group, spider)))
                groups.append(group)
                group = []
            else:
                stage = _output_stage(mw, spider)
                if stage is not None:
                    self._outputs.append((pos, stage))
            hook = getattr(mw, "process_spider_exception", None)
            if callable(hook):
                name = f"{_mw_name(mw)}.process_spider_exception"
                self._handlers.append((pos, name, spider_optional(hook, 2)))
            if callable(getattr(mw, "process_start", None)) or callable(
                getattr(mw, "process_start_requests", None)
            ):
                self._starts.append(_start_stage(mw, spider))
        self._last_handler = self._handlers[-1][0] if self._handlers else -1
        self._only_filters: list[RequestFilter] | None = None
        if not self._handlers and len(self._outputs) == len(groups) <= 1:
            self._only_filters = groups[0] if groups else []

    @classmethod
    def from_crawler(
        cls, crawler: CrawlContext, spider: Any, innermost: Sequence[Any] = ()
    ) -> SpiderMiddlewareManager:
        """The built-ins (SPIDER_MIDDLEWARES_BASE, or the setting of that name when set)
        merged with SPIDER_MIDDLEWARES, then
        ``innermost``: the crawl's own, next to the spider (callback traces)."""
        view = crawler.settings.view(SpiderSettings)
        base = view.spider_middlewares_base
        middlewares = build_components(
            SPIDER_MIDDLEWARES_BASE if base is None else base, view.spider_middlewares, crawler
        )
        return cls([*middlewares, *innermost], spider)

    # -- input ----------------------------------------------------------------------------
    async def process_input(self, response: Any) -> None:
        """Run every ``process_spider_input``; raises what a middleware raised."""
        spider = self.spider
        for name, hook, is_async in self._input:
            result = hook(response, spider)
            if is_async:
                result = await result
            if result is not None:
                raise _InvalidOutput(f"{name} returned {type(result).__name__}; expected None")

    # -- output ---------------------------------------------------------------------------
    def process_output(self, response: Any, result: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """``result`` (a callback's output) through every ``process_spider_output``."""
        if not self._handlers:
            out: AsyncIterable[Any] = result
            for _pos, stage in self._outputs:
                out = stage(response, out)
            return aiter(out)
        pending: list[AsyncIterator[Any]] = []
        return self._then_recovered(self._chain(response, result, 0, pending), pending)

    def process_result(self, response: Any, result: Any) -> AsyncIterator[Any]:
        """``process_output(response, aiter_output(result))``, with the adapter folded into
        the filters' pass where nothing else is in the chain (a step fewer per object)."""
        filters = self._only_filters
        if filters is None or not _plain_iterable(result):
            return self.process_output(response, aiter_output(result))
        spider = self.spider
        checks = [c for c in (f.request_filter(response, spider) for f in filters) if c]
        return _checked_iterable(checks, result)

    def _chain(
        self,
        response: Any,
        source: AsyncIterable[Any],
        start: int,
        pending: list[AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """``source`` through the output stages at ``start`` and after, each followed by
        a guard when a later middleware has an exception hook."""
        out: AsyncIterable[Any] = source
        if start <= self._last_handler:
            out = self._guard(response, out, start, pending)
        for pos, stage in self._outputs:
            if pos < start:
                continue
            out = stage(response, out)
            if pos < self._last_handler:
                out = self._guard(response, out, pos + 1, pending)
        return aiter(out)

    async def _guard(
        self,
        response: Any,
        upstream: AsyncIterable[Any],
        start: int,
        pending: list[AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        try:
            async for obj in upstream:
                yield obj
        except (CloseSpider, FatalError):
            raise
        except Exception as exc:
            if getattr(exc, _OFFERED, False):
                raise
            recovered = await self._offer(response, exc, start, pending)
            if recovered is None:
                raise
            pending.append(recovered)

    @staticmethod
    async def _then_recovered(
        main: AsyncIterator[Any], pending: list[AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        async for obj in main:
            yield obj
        while pending:
            async for obj in pending.pop(0):
                yield obj

    # -- exceptions -----------------------------------------------------------------------
    async def process_exception(
        self, response: Any, exc: BaseException
    ) -> AsyncIterator[Any] | None:
        """Offer ``exc`` (from a callback or ``process_input``) to every
        ``process_spider_exception``; None if no middleware recovers, else the recovered
        output, already through the rest of the output chain."""
        if isinstance(exc, CloseSpider | FatalError) or getattr(exc, _OFFERED, False):
            return None
        pending: list[AsyncIterator[Any]] = []
        recovered = await self._offer(response, exc, 0, pending)
        if recovered is None:
            return None
        return self._then_recovered(recovered, pending)

    async def _offer(
        self,
        response: Any,
        exc: BaseException,
        start: int,
        pending: list[AsyncIterator[Any]],
    ) -> AsyncIterator[Any] | None:
        _mark_offered(exc)
        spider = self.spider
        for pos, name, hook in self._handlers:
            if pos < start:
                continue
            result = hook(response, exc, spider)
            if inspect.isawaitable(result):
                result = await result
            if result is None:
                continue
            return self._chain(response, _as_async(result, name), pos + 1, pending)
        return None

    # -- start requests -------------------------------------------------------------------
    def process_start_requests(self, start: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """The spider's start requests through every ``process_start_requests``."""
        out: AsyncIterable[Any] = start
        for stage in self._starts:
            out = stage(out)
        return aiter(out)
