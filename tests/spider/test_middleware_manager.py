"""SpiderMiddlewareManager: Scrapy's hook order, sync/async hooks and exception routing."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

import pytest

from skitter.exceptions import CloseSpider
from skitter.http import Request, Response
from skitter.spider._builtin_middlewares import (
    DepthMiddleware,
    HttpErrorMiddleware,
    OffsiteMiddleware,
    RefererMiddleware,
    UrlLengthMiddleware,
)
from skitter.spider._middleware import (
    SPIDER_MIDDLEWARES_BASE,
    RequestFilter,
    SpiderMiddlewareManager,
)

SPIDER = object()
RESPONSE = Response("http://127.0.0.1/page", body=b"<html></html>")


async def source(*objs: Any, error: Exception | None = None) -> AsyncIterator[Any]:
    for obj in objs:
        yield obj
    if error is not None:
        raise error


async def collect(it: AsyncIterable[Any]) -> list[Any]:
    return [obj async for obj in it]


class Tagger:
    """Appends its name to every dict passing its output hook; records input calls."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def process_spider_input(self, response: Response, spider: Any) -> None:
        self.log.append(f"input {self.name}")

    async def process_spider_output(
        self, response: Response, result: AsyncIterable[Any], spider: Any
    ) -> AsyncIterator[Any]:
        async for obj in result:
            if isinstance(obj, dict):
                obj.setdefault("trail", []).append(self.name)
            yield obj


class Recover(Tagger):
    """Recovers from ValueError with one item."""

    async def process_spider_exception(
        self, response: Response, exception: BaseException, spider: Any
    ) -> Iterable[Any] | None:
        self.log.append(f"exception {self.name} {type(exception).__name__}")
        if isinstance(exception, ValueError):
            return [{"recovered_by": self.name}]
        return None


class Observe(Tagger):
    """Sees exceptions but never recovers."""

    def process_spider_exception(
        self, response: Response, exception: BaseException, spider: Any
    ) -> None:
        self.log.append(f"exception {self.name} {type(exception).__name__}")


class FailsInOutput(Tagger):
    async def process_spider_output(
        self, response: Response, result: AsyncIterable[Any], spider: Any
    ) -> AsyncIterator[Any]:
        async for obj in result:
            yield obj
        raise ValueError("middleware bug")


def chain(*mws: Any) -> SpiderMiddlewareManager:
    """``mws`` from the engine's side (lowest order) to the spider's side."""
    return SpiderMiddlewareManager(list(mws), SPIDER)


async def test_input_runs_engine_side_first_output_spider_side_first() -> None:
    log: list[str] = []
    m = chain(Tagger("low", log), Tagger("high", log))
    await m.process_input(RESPONSE)
    out = await collect(m.process_output(RESPONSE, source({})))
    assert log == ["input low", "input high"]
    assert out == [{"trail": ["high", "low"]}]


async def test_async_input_hooks_and_bad_return_values() -> None:
    class AsyncInput:
        async def process_spider_input(self, response: Response, spider: Any) -> None:
            raise PermissionError("no")

    class ReturnsSomething:
        def process_spider_input(self, response: Response, spider: Any) -> bool:
            return True

    with pytest.raises(PermissionError):
        await chain(AsyncInput()).process_input(RESPONSE)
    with pytest.raises(TypeError, match=r"ReturnsSomething.process_spider_input returned bool"):
        await chain(ReturnsSomething()).process_input(RESPONSE)


async def test_sync_output_hooks_get_a_list_and_async_twin_is_preferred() -> None:
    class OldStyle:
        def process_spider_output(self, response: Response, result: Any, spider: Any) -> Any:
            assert isinstance(result, list)
            for obj in result:
                yield {"old": obj}

    class Universal:
        def process_spider_output(self, response: Response, result: Any, spider: Any) -> Any:
            raise AssertionError("the async twin should be used")

        async def process_spider_output_async(
            self, response: Response, result: AsyncIterable[Any], spider: Any
        ) -> AsyncIterator[Any]:
            async for obj in result:
                yield {"universal": obj}

    m = chain(Universal(), OldStyle())
    assert await collect(m.process_output(RESPONSE, source(1))) == [{"universal": {"old": 1}}]


async def test_callback_error_is_offered_to_all_and_recovery_skips_earlier_outputs() -> None:
    log: list[str] = []
    # Spider side first: spider_side (observes) -> recover (recovers) -> engine_side
    m = chain(Tagger("engine_side", log), Recover("recover", log), Observe("spider_side", log))
    out = await collect(
        m.process_output(RESPONSE, source({"n": 1}, {"n": 2}, error=ValueError("bad page")))
    )
    assert out == [
        {"n": 1, "trail": ["spider_side", "recover", "engine_side"]},
        {"n": 2, "trail": ["spider_side", "recover", "engine_side"]},
        # recovered output passes only the middlewares after the one that recovered
        {"recovered_by": "recover", "trail": ["engine_side"]},
    ]
    assert log == ["exception spider_side ValueError", "exception recover ValueError"]


async def test_middleware_error_is_offered_only_to_middlewares_after_it() -> None:
    log: list[str] = []
    m = chain(Recover("engine_side", log), FailsInOutput("buggy", log), Observe("spider_side", log))
    out = await collect(m.process_output(RESPONSE, source({"n": 1})))
    assert log == ["exception engine_side ValueError"]
    assert out == [
        {"n": 1, "trail": ["spider_side", "engine_side"]},
        {"recovered_by": "engine_side"},
    ]


async def test_unrecovered_error_leaves_once_and_is_not_offered_twice() -> None:
    log: list[str] = []
    m = chain(Observe("a", log), Observe("b", log))
    with pytest.raises(KeyError) as info:
        await collect(m.process_output(RESPONSE, source({}, error=KeyError("x"))))
    assert log == ["exception b KeyError", "exception a KeyError"]
    assert await m.process_exception(RESPONSE, info.value) is None
    assert len(log) == 2


async def test_process_exception_for_errors_outside_the_output() -> None:
    log: list[str] = []
    m = chain(Tagger("engine_side", log), Recover("recover", log), Tagger("spider_side", log))
    recovered = await m.process_exception(RESPONSE, ValueError("raised by the callback"))
    assert recovered is not None
    assert await collect(recovered) == [{"recovered_by": "recover", "trail": ["engine_side"]}]
    assert await m.process_exception(RESPONSE, LookupError()) is None


async def test_close_spider_is_never_offered() -> None:
    log: list[str] = []

    class SwallowAll(Tagger):
        def process_spider_exception(self, response: Any, exc: Any, spider: Any) -> list[Any]:
            log.append("swallowed")
            return []

    m = chain(SwallowAll("s", log))
    with pytest.raises(CloseSpider):
        await collect(m.process_output(RESPONSE, source(error=CloseSpider("done"))))
    assert await m.process_exception(RESPONSE, CloseSpider("done")) is None
    assert log == []


async def test_an_exception_hook_must_return_none_or_an_iterable() -> None:
    class Bad:
        def process_spider_exception(self, response: Any, exc: Any, spider: Any) -> int:
            return 5

    with pytest.raises(TypeError, match=r"Bad.process_spider_exception returned int"):
        await chain(Bad()).process_exception(RESPONSE, ValueError())


async def test_start_requests_pass_spider_side_first_and_stay_lazy() -> None:
    pulled: list[int] = []

    async def starts() -> AsyncIterator[Request]:
        for i in range(1000):
            pulled.append(i)
            yield Request(f"http://127.0.0.1/{i}")

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        async def process_start_requests(
            self, start: AsyncIterable[Request], spider: Any
        ) -> AsyncIterator[Request]:
            async for request in start:
                request.meta.setdefault("marks", []).append(self.name)
                yield request

    class Modern:
        async def process_start(self, start: AsyncIterable[Request]) -> AsyncIterator[Request]:
            async for request in start:
                request.meta.setdefault("marks", []).append("modern")
                yield request

    m = chain(Mark("low"), Modern(), Mark("high"))
    it = m.process_start_requests(starts())
    first = await anext(it)
    assert first.meta["marks"] == ["high", "modern", "low"]
    assert pulled == [0]
    await it.aclose()


def test_from_crawler_builds_the_builtins_in_order(make_crawler) -> None:
    m = SpiderMiddlewareManager.from_crawler(make_crawler(), SPIDER)
    assert [type(mw) for mw in m.middlewares] == [
        HttpErrorMiddleware,
        OffsiteMiddleware,
        RefererMiddleware,
        UrlLengthMiddleware,
        DepthMiddleware,
    ]
    off = {path: None for path in SPIDER_MIDDLEWARES_BASE if "Referer" in path or "Url" in path}
    m = SpiderMiddlewareManager.from_crawler(make_crawler(SPIDER_MIDDLEWARES=off), SPIDER)
    assert RefererMiddleware not in map(type, m.middlewares)
    assert UrlLengthMiddleware not in map(type, m.middlewares)
    m = SpiderMiddlewareManager.from_crawler(
        make_crawler(REFERER_ENABLED=False, URLLENGTH_LIMIT=0), SPIDER
    )
    assert len(m.middlewares) == 3


class _Trail(RequestFilter):
    def __init__(self, name: str) -> None:
        self.name = name

    def request_filter(self, response: Any, spider: Any) -> Any:
        def check(request: Request) -> Request | None:
            request.meta.setdefault("trail", []).append(self.name)
            return None if request.url.endswith("/drop-" + self.name) else request

        return check


class _UserStage:
    async def process_spider_output(self, response: Any, result: Any, spider: Any) -> Any:
        async for obj in result:
            if isinstance(obj, Request):
                obj.meta.setdefault("trail", []).append("user")
            yield obj


async def _through(mws: list[Any], *objs: Any) -> list[Any]:
    manager = SpiderMiddlewareManager(mws, spider=None)

    async def source() -> Any:
        for obj in objs:
            yield obj

    response = Response("http://e.com/", request=Request("http://e.com/"))
    return [obj async for obj in manager.process_output(response, source())]


async def test_fused_request_filters_keep_scrapy_order() -> None:
    # ascending order: the spider's side is the end of the list and runs first
    out = await _through(
        [_Trail("a"), _UserStage(), _Trail("b"), _Trail("c")],
        Request("http://e.com/x"),
        {"item": 1},
    )
    assert out[0].meta["trail"] == ["c", "b", "user", "a"]
    assert out[1] == {"item": 1}


async def test_a_fused_filter_drops_and_stops_the_rest() -> None:
    out = await _through(
        [_Trail("a"), _Trail("b")], Request("http://e.com/drop-b"), Request("http://e.com/keep")
    )
    assert [r.url for r in out] == ["http://e.com/keep"]
    assert out[0].meta["trail"] == ["b", "a"]


def _result_through(mws: list[Any], result: Any) -> AsyncIterator[Any]:
    manager = SpiderMiddlewareManager(mws, spider=None)
    return manager.process_result(
        Response("http://e.com/", request=Request("http://e.com/")), result
    )


async def test_a_plain_callback_output_crosses_only_filters_in_one_generator() -> None:
    def callback() -> Iterable[Any]:
        yield Request("http://e.com/drop-b")
        yield {"item": 1}
        yield None
        yield Request("http://e.com/keep")

    out = _result_through([_Trail("a"), _Trail("b")], callback())
    # one generator: the callback's own, iterated by the filters' pass (no adapter under it)
    upstream = out.ag_frame.f_locals["iterable"]  # type: ignore[attr-defined]
    assert inspect.isgenerator(upstream)
    objs = await collect(out)
    assert [getattr(o, "url", o) for o in objs] == [{"item": 1}, "http://e.com/keep"]
    assert objs[1].meta["trail"] == ["b", "a"]


async def test_callback_output_takes_the_whole_chain_past_filters() -> None:
    class Watcher(RequestFilter):
        def request_filter(self, response: Any, spider: Any) -> Any:
            return None

        def process_spider_exception(self, response: Any, exc: Any, spider: Any) -> Any:
            return [{"recovered": True}]

    def failing() -> Iterable[Any]:
        yield {"item": 1}
        raise ValueError("boom")

    assert await collect(_result_through([Watcher()], failing())) == [
        {"item": 1},
        {"recovered": True},
    ]
    user = await collect(_result_through([_Trail("a"), _UserStage()], [Request("http://e.com/x")]))
    assert user[0].meta["trail"] == ["user", "a"]
    assert await collect(_result_through([_Trail("a")], {"one": 1})) == [{"one": 1}]
    assert await collect(_result_through([_Trail("a")], None)) == []
