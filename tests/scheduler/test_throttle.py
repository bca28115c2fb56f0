"""AutoThrottle: Scrapy's delay algorithm, its bounds, and its settings."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skitter.exceptions import ConfigError
from skitter.scheduler import AutoThrottle
from skitter.settings import Settings


def test_defaults_are_scrapys() -> None:
    throttle = AutoThrottle()
    assert (throttle.start_delay, throttle.max_delay, throttle.target_concurrency) == (
        5.0,
        60.0,
        1.0,
    )
    assert throttle.debug is False


def test_off_by_default_and_built_from_settings() -> None:
    assert AutoThrottle.from_settings(Settings()) is None
    throttle = AutoThrottle.from_settings(
        Settings(
            {
                "AUTOTHROTTLE_ENABLED": True,
                "AUTOTHROTTLE_START_DELAY": 2,
                "AUTOTHROTTLE_MAX_DELAY": 30,
                "AUTOTHROTTLE_TARGET_CONCURRENCY": 4,
                "AUTOTHROTTLE_DEBUG": True,
            }
        )
    )
    assert throttle is not None
    assert (throttle.start_delay, throttle.max_delay, throttle.target_concurrency) == (
        2.0,
        30.0,
        4.0,
    )
    assert throttle.debug is True


@pytest.mark.parametrize("target", [0, -1.0, math.nan, math.inf, True, "2"])
def test_target_concurrency_must_be_positive(target: object) -> None:
    with pytest.raises(ConfigError, match="AUTOTHROTTLE_TARGET_CONCURRENCY"):
        AutoThrottle(target_concurrency=target)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["start_delay", "max_delay"])
def test_delays_must_be_seconds(field: str) -> None:
    with pytest.raises(ConfigError, match=f"AUTOTHROTTLE_{field.upper()}"):
        AutoThrottle(**{field: -1.0})


def test_initial_delay_is_start_delay_but_never_below_the_configured_delay() -> None:
    throttle = AutoThrottle(start_delay=5.0)
    assert throttle.initial_delay(0.0) == 5.0
    assert throttle.initial_delay(8.0) == 8.0


def test_moves_halfway_down_toward_latency_over_target() -> None:
    throttle = AutoThrottle(target_concurrency=2.0)
    # target = 1.0 / 2 = 0.5; halfway from 4.5 is 2.5
    assert throttle.next_delay(4.5, 1.0, 200, min_delay=0.0) == 2.5


def test_rises_at_once_when_the_server_slows_down() -> None:
    throttle = AutoThrottle()
    assert throttle.next_delay(1.0, 10.0, 200, min_delay=0.0) == 10.0


@pytest.mark.parametrize("target", [0.5, 1.0, 4.0])
def test_converges_to_latency_over_target_concurrency(target: float) -> None:
    throttle = AutoThrottle(target_concurrency=target)
    delay = throttle.initial_delay(0.0)
    for _ in range(60):
        delay = throttle.next_delay(delay, 0.8, 200, min_delay=0.0)
    assert delay == pytest.approx(0.8 / target, rel=1e-9)


@pytest.mark.parametrize("status", [404, 500, 302, None])
def test_non_200_never_lowers_the_delay_but_may_raise_it(status: int | None) -> None:
    throttle = AutoThrottle()
    assert throttle.next_delay(5.0, 0.01, status, min_delay=0.0) == 5.0
    assert throttle.next_delay(5.0, 9.0, status, min_delay=0.0) == 9.0


def test_bounded_by_max_delay_and_configured_delay() -> None:
    throttle = AutoThrottle(max_delay=10.0)
    assert throttle.next_delay(5.0, 100.0, 200, min_delay=0.0) == 10.0
    assert throttle.next_delay(1.0, 0.0, 200, min_delay=0.75) == 0.75
    # The configured delay is a promise to the site: it beats AUTOTHROTTLE_MAX_DELAY.
    assert throttle.next_delay(20.0, 100.0, 200, min_delay=20.0) == 20.0


@pytest.mark.parametrize("latency", [math.nan, math.inf, -1.0])
def test_unusable_latency_changes_nothing(latency: float) -> None:
    assert AutoThrottle().next_delay(3.0, latency, 200, min_delay=0.0) == 3.0


@given(
    delay=st.floats(0, 100),
    latency=st.floats(0, 1000),
    status=st.sampled_from([200, 404, 503, None]),
    min_delay=st.floats(0, 50),
)
def test_result_always_within_bounds(
    delay: float, latency: float, status: int | None, min_delay: float
) -> None:
    throttle = AutoThrottle(max_delay=60.0)
    new = throttle.next_delay(delay, latency, status, min_delay=min_delay)
    assert new == delay or min_delay <= new <= max(60.0, min_delay)
    if status != 200:
        assert new >= delay
