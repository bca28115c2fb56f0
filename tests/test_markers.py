"""The markers tests/conftest.py puts on each test from what it uses: read here from the
tests' own nodes, so a change to the rules that stops marking shows."""

from __future__ import annotations

from typing import Any

import pytest

from skitter.testing._redis import RedisServer


def _marks(request: pytest.FixtureRequest) -> set[str]:
    return {mark.name for mark in request.node.iter_markers()}


def _starts_redis() -> type[RedisServer]:
    """A helper that would start a redis-server: naming it is enough."""
    return RedisServer


def test_a_test_that_starts_nothing_carries_no_marker(request: pytest.FixtureRequest) -> None:
    assert _marks(request) & {"redis", "browser", "subprocess", "network", "e2e"} == set()


def test_a_local_server_is_network_and_stays_in_the_fast_tier(
    serve: Any, request: pytest.FixtureRequest
) -> None:
    assert "network" in _marks(request)
    assert "e2e" not in _marks(request)


def test_a_helper_of_the_module_that_starts_redis_marks_its_caller(
    request: pytest.FixtureRequest,
) -> None:
    assert _starts_redis() is RedisServer
    assert {"redis", "e2e"} <= _marks(request)


@pytest.mark.slow
def test_slow_by_hand_is_in_the_slow_tier(request: pytest.FixtureRequest) -> None:
    assert "e2e" in _marks(request)
