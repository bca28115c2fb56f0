"""aiter_output: every shape a callback may return, normalised to an async iterator."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import pydantic
import pytest

from skitter.http import Request
from skitter.spider._middleware import aiter_output

REQ = Request("http://127.0.0.1/a")


@dataclasses.dataclass
class DataItem:
    n: int


@attrs.define
class AttrsItem:
    n: int


class PydanticItem(pydantic.BaseModel):
    n: int


async def collect(result: Any) -> list[Any]:
    return [obj async for obj in aiter_output(result)]


def gen() -> Iterator[Any]:
    yield REQ
    yield {"n": 1}


async def agen() -> AsyncIterator[Any]:
    yield REQ
    yield {"n": 1}


async def coro(value: Any) -> Any:
    return value


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (None, []),
        (REQ, [REQ]),
        ({"n": 1}, [{"n": 1}]),
        (DataItem(1), [DataItem(1)]),
        (AttrsItem(1), [AttrsItem(1)]),
        (PydanticItem(n=1), [PydanticItem(n=1)]),  # iterable, but one item
        ([REQ, {"n": 1}], [REQ, {"n": 1}]),
        ((REQ,), [REQ]),
        ("not a request", ["not a request"]),  # one bad object, for the engine to report
        (42, [42]),
    ],
    ids=lambda v: type(v).__name__,
)
async def test_plain_values(result: Any, expected: list[Any]) -> None:
    assert await collect(result) == expected


async def test_generators_and_coroutines() -> None:
    assert await collect(gen()) == [REQ, {"n": 1}]
    assert await collect(agen()) == [REQ, {"n": 1}]
    assert await collect(coro(None)) == []
    assert await collect(coro(REQ)) == [REQ]
    assert await collect(coro([REQ, REQ])) == [REQ, REQ]
    assert await collect(coro(gen())) == [REQ, {"n": 1}]
    assert await collect(coro(agen())) == [REQ, {"n": 1}]


async def test_an_async_generator_is_not_wrapped() -> None:
    source = agen()
    assert aiter_output(source) is source
    await source.aclose()


async def test_errors_surface_while_iterating_after_earlier_output() -> None:
    def failing() -> Iterator[Any]:
        yield REQ
        raise ValueError("bad page")

    seen: list[Any] = []

    async def consume() -> None:
        async for obj in aiter_output(failing()):
            seen.append(obj)

    with pytest.raises(ValueError, match="bad page"):
        await consume()
    assert seen == [REQ]


async def test_a_coroutine_returning_a_coroutine_is_an_error() -> None:
    async def outer() -> Any:
        return coro(1)

    with pytest.raises(TypeError, match="another awaitable"):
        await collect(outer())
