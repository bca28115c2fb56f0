"""``compose``: the downloader middlewares' onion, run as one coroutine a download.

Each test states where an outcome must go as if every middleware wrapped the layers
inside it in a try block of its own (Scrapy's meaning of the hooks)."""

from __future__ import annotations

from typing import Any

import pytest

from skitter.downloader import compose
from skitter.http import Request, Response

URL = "http://example.com/"


class Recorder:
    """A middleware that logs each hook it runs and answers as told."""

    def __init__(self, name: str, log: list[str], **answers: Any) -> None:
        self.name = name
        self.log = log
        self.answers = answers

    def _answer(self, hook: str, default: Any) -> Any:
        self.log.append(f"{self.name}.{hook}")
        answer = self.answers.get(hook, default)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def process_request(self, request: Request, spider: Any) -> Any:
        return self._answer("request", None)

    def process_response(self, request: Request, response: Response, spider: Any) -> Any:
        return self._answer("response", response)

    def process_exception(self, request: Request, exception: Exception, spider: Any) -> Any:
        self.log.append(f"({type(exception).__name__})")
        return self._answer("exception", None)


async def _ok(request: Request) -> Response:
    return Response(request.url, status=200, request=request)


async def _boom(request: Request) -> Response:
    raise ConnectionError("down")


async def test_requests_go_in_outermost_first_and_responses_out_innermost_first() -> None:
    log: list[str] = []
    chain = compose([Recorder("a", log), Recorder("b", log)], _ok, None)
    response = await chain(Request(URL))
    assert isinstance(response, Response)
    assert log == ["a.request", "b.request", "b.response", "a.response"]


async def test_a_response_from_process_request_skips_the_inner_layers() -> None:
    log: list[str] = []
    answer = Response(URL, status=203)
    chain = compose([Recorder("a", log), Recorder("b", log, request=answer)], _boom, None)
    assert await chain(Request(URL)) is answer
    assert log == ["a.request", "b.request", "b.response", "a.response"]


async def test_a_request_from_process_request_ends_the_chain() -> None:
    log: list[str] = []
    other = Request(URL + "other")
    chain = compose([Recorder("a", log), Recorder("b", log, request=other)], _ok, None)
    assert await chain(Request(URL)) is other
    assert log == ["a.request", "b.request"]


async def test_a_transport_error_reaches_every_process_exception_until_one_answers() -> None:
    log: list[str] = []
    answer = Response(URL, status=200)
    layers = [Recorder("a", log), Recorder("b", log, exception=answer), Recorder("c", log)]
    assert await compose(layers, _boom, None)(Request(URL)) is answer
    # b's answer goes out through b's own process_response, then a's.
    assert log == [
        "a.request", "b.request", "c.request",
        "(ConnectionError)", "c.exception", "(ConnectionError)", "b.exception",
        "b.response", "a.response",
    ]  # fmt: skip


async def test_an_unhandled_error_is_raised_as_it_was() -> None:
    log: list[str] = []
    chain = compose([Recorder("a", log), Recorder("b", log)], _boom, None)
    with pytest.raises(ConnectionError, match="down"):
        await chain(Request(URL))
    assert log == [
        "a.request", "b.request",
        "(ConnectionError)", "b.exception", "(ConnectionError)", "a.exception",
    ]  # fmt: skip


async def test_an_error_in_process_request_goes_to_the_same_layers_process_exception() -> None:
    log: list[str] = []
    answer = Response(URL, status=200)
    layers = [Recorder("a", log), Recorder("b", log, request=ValueError(), exception=answer)]
    assert await compose(layers, _ok, None)(Request(URL)) is answer
    assert log == [
        "a.request", "b.request", "(ValueError)", "b.exception", "b.response", "a.response",
    ]  # fmt: skip


async def test_an_error_in_process_response_goes_to_the_layer_outside() -> None:
    log: list[str] = []
    answer = Response(URL, status=200)
    layers = [Recorder("a", log, exception=answer), Recorder("b", log, response=KeyError())]
    assert await compose(layers, _ok, None)(Request(URL)) is answer
    assert log == [
        "a.request", "b.request", "b.response", "(KeyError)", "a.exception", "a.response",
    ]  # fmt: skip


async def test_an_error_raised_by_process_exception_replaces_the_first() -> None:
    log: list[str] = []
    layers = [Recorder("a", log), Recorder("b", log, exception=LookupError("again"))]
    with pytest.raises(LookupError) as raised:
        await compose(layers, _boom, None)(Request(URL))
    assert isinstance(raised.value.__context__, ConnectionError)
    assert log[-2:] == ["(LookupError)", "a.exception"]


async def test_a_hook_returning_the_wrong_type_fails_in_the_layer_outside() -> None:
    log: list[str] = []
    layers = [Recorder("a", log), Recorder("b", log, response=42)]
    with pytest.raises(TypeError, match=r"Recorder.process_response returned int"):
        await compose(layers, _ok, None)(Request(URL))
    assert log[-2:] == ["(_InvalidOutput)", "a.exception"]  # a TypeError, by Scrapy's name


async def test_async_hooks_are_awaited() -> None:
    class Async:
        async def process_request(self, request: Request, spider: Any) -> None:
            return None

        async def process_response(
            self, request: Request, response: Response, spider: Any
        ) -> Response:
            return Response(response.url, status=299)

    result = await compose([Async()], _ok, None)(Request(URL))
    assert isinstance(result, Response) and result.status == 299


async def test_without_hooks_the_transport_is_called_directly() -> None:
    assert compose([object()], _ok, None) is _ok  # type: ignore[list-item]
