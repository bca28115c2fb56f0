"""``check_request``: a request the frontier cannot queue is refused before anything
changes, naming what is wrong with it."""

from __future__ import annotations

from typing import Any

import pytest

from skitter.frontier import MemoryFrontier
from skitter.http import Request


@pytest.mark.parametrize(
    ("field", "value"),
    [("exetime", "soon"), ("exetime", True), ("age", None), ("age", False)],
)
async def test_a_time_that_is_not_a_number_is_refused_and_nothing_is_queued(
    field: str, value: Any
) -> None:
    frontier = MemoryFrontier()
    good, bad = Request("http://a.example/1"), Request("http://a.example/2")
    setattr(bad, field, value)
    with pytest.raises(TypeError, match=f"{field} of .* must be a number"):
        await frontier.push([good, bad], 0.0)
    assert await frontier.lease(10, 0.0, 60.0) == []


@pytest.mark.parametrize(("field", "value"), [("exetime", 0), ("exetime", 1.5), ("age", 3)])
async def test_int_and_float_times_are_queued(field: str, value: Any) -> None:
    frontier = MemoryFrontier()
    request = Request("http://a.example/1")
    setattr(request, field, value)
    assert len(await frontier.push([request], 10.0)) == 1
