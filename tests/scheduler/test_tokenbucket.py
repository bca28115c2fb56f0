"""TokenBucket on a fake clock: full at start, refills at rate, capped at burst."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skitter._clock import FakeClock
from skitter.exceptions import ConfigError
from skitter.scheduler import RateLimits
from skitter.scheduler._tokenbucket import TokenBucket


def test_starts_full_and_empties() -> None:
    bucket = TokenBucket(2.0, 5.0, FakeClock())
    assert bucket.tokens == 5.0
    assert [bucket.try_take() for _ in range(6)] == [True] * 5 + [False]
    assert bucket.tokens == 0.0


def test_default_burst_is_ten_seconds_of_rate() -> None:
    assert TokenBucket(3.0, clock=FakeClock()).burst == 30.0
    assert TokenBucket(0.05, clock=FakeClock()).burst == 1.0  # at least one token
    assert TokenBucket(0.0, clock=FakeClock()).burst == 0.0


def test_refills_at_rate_up_to_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2.0, 4.0, clock)
    assert bucket.try_take(4)
    clock.advance(0.5)
    assert bucket.tokens == pytest.approx(1.0)
    clock.advance(100)
    assert bucket.tokens == 4.0


def test_wait_time_says_when_tokens_are_there() -> None:
    clock = FakeClock()
    bucket = TokenBucket(4.0, 4.0, clock)
    assert bucket.wait_time() == 0.0
    bucket.try_take(4)
    assert bucket.wait_time() == pytest.approx(0.25)
    assert bucket.wait_time(2) == pytest.approx(0.5)
    assert not bucket.try_take()
    clock.advance(bucket.wait_time())
    assert bucket.try_take(), "waiting exactly wait_time() must be enough"


def test_never_more_than_burst_and_zero_rate_waits_forever() -> None:
    clock = FakeClock()
    assert TokenBucket(1.0, 3.0, clock).wait_time(4) == math.inf
    stopped = TokenBucket(0.0, 2.0, clock)
    assert stopped.try_take(2)
    clock.advance(1e6)
    assert not stopped.try_take()
    assert stopped.wait_time() == math.inf


def test_unlimited() -> None:
    bucket = TokenBucket(None, clock=FakeClock())
    assert all(bucket.try_take() for _ in range(10_000))
    assert bucket.tokens == math.inf
    assert bucket.wait_time(1e9) == 0.0
    assert (bucket.rate, bucket.burst) == (None, math.inf)


def test_take_is_all_or_nothing() -> None:
    bucket = TokenBucket(1.0, 3.0, FakeClock())
    assert not bucket.try_take(3.5)
    assert bucket.tokens == 3.0


def test_reconfigure_keeps_earned_tokens_capped() -> None:
    clock = FakeClock()
    bucket = TokenBucket(1.0, 10.0, clock)
    bucket.try_take(10)
    clock.advance(4)  # 4 tokens earned at the old rate
    bucket.reconfigure(100.0, 200.0)
    assert bucket.tokens == pytest.approx(4.0), "raising the rate gives no free burst"
    clock.advance(1)
    assert bucket.tokens == pytest.approx(104.0)
    bucket.reconfigure(1.0, 2.0)
    assert bucket.tokens == 2.0
    assert (bucket.rate, bucket.burst) == (1.0, 2.0)


def test_reconfigure_between_limited_and_unlimited() -> None:
    clock = FakeClock()
    bucket = TokenBucket(None, clock=clock)
    bucket.reconfigure(2.0)
    assert (bucket.burst, bucket.tokens) == (20.0, 20.0)
    bucket.try_take(20)
    bucket.reconfigure(None)
    assert bucket.try_take(1000)


@pytest.mark.parametrize(
    ("rate", "burst"), [(-1, None), (1.0, -2), (math.nan, None), (1, math.inf)]
)
def test_rejects_bad_numbers(rate: float, burst: float | None) -> None:
    with pytest.raises(ValueError, match="token bucket"):
        TokenBucket(rate, burst, FakeClock())


def test_rejects_non_numbers() -> None:
    with pytest.raises(TypeError, match="rate"):
        TokenBucket("5", clock=FakeClock())  # type: ignore[arg-type]


steps = st.lists(
    st.tuples(st.floats(0, 5), st.floats(0, 12)),  # (advance seconds, tokens to take)
    max_size=60,
)


@pytest.mark.slow  # a large search: seconds even on an idle machine
@settings(max_examples=200, deadline=None)
@given(rate=st.floats(0.01, 50), burst=st.floats(1, 100), steps=steps)
def test_tokens_stay_between_zero_and_burst(rate: float, burst: float, steps) -> None:
    clock = FakeClock()
    bucket = TokenBucket(rate, burst, clock)
    for seconds, n in steps:
        clock.advance(seconds)
        before = bucket.tokens
        taken = bucket.try_take(n)
        assert taken == (before + 1e-9 >= n)
        assert 0.0 <= bucket.tokens <= burst


@settings(max_examples=50, deadline=None)
@given(rate=st.floats(0.5, 200), burst=st.floats(1, 50))
def test_long_run_rate(rate: float, burst: float) -> None:
    """A dispatcher that takes all it may and sleeps ``wait_time()`` gets exactly
    ``burst + rate * elapsed`` tokens, give or take one."""
    clock = FakeClock()
    bucket = TokenBucket(rate, burst, clock)
    taken = 0
    start = clock.monotonic()
    while taken < 300:
        while bucket.try_take():
            taken += 1
        clock.advance(bucket.wait_time())
    elapsed = clock.monotonic() - start
    assert abs(taken - (burst + rate * elapsed)) <= 1 + 1e-6


# -- RateLimits: the one MAX_RATE / MAX_BURST rule ------------------------------------------
def test_rate_limits_refuse_what_is_above_the_caps_and_say_whose() -> None:
    limits = RateLimits(10.0, 20.0, " of worker w1", " of worker w2")
    with pytest.raises(ConfigError, match=r"^rate 11/s is above MAX_RATE \(10/s\) of worker w1$"):
        limits.check(11.0, None)
    with pytest.raises(ConfigError, match=r"^burst 21 is above MAX_BURST \(20\) of worker w2$"):
        limits.check(5.0, 21.0)
    with pytest.raises(ConfigError, match=r"^an unlimited rate is above MAX_RATE \(10/s\) of w"):
        limits.check(None, None)
    for rate, burst in ((-1.0, None), (float("nan"), None), (float("inf"), None), (1.0, -2.0)):
        with pytest.raises(ConfigError, match="rate and burst must be >= 0"):
            limits.check(rate, burst)
    assert limits.check(10.0, 20.0) == 20.0


def test_a_burst_left_out_is_the_default_within_the_cap() -> None:
    assert RateLimits().check(3.0, None) == 30.0
    assert RateLimits(max_burst=8.0).check(3.0, None) == 8.0
    assert RateLimits(max_burst=8.0).burst_for(0.5, None) == 5.0
    assert RateLimits(max_burst=8.0).burst_for(3.0, 2.0) == 2.0
    assert RateLimits().check(None, 5.0) is None
