"""CircuitBreaker on a fake clock: pause after failures, probe, close or pause again."""

from __future__ import annotations

import pytest

from skitter._clock import FakeClock
from skitter.scheduler._breaker import BreakerState, CircuitBreaker

CLOSED, OPEN, HALF = BreakerState.CLOSED, BreakerState.OPEN, BreakerState.HALF_OPEN


def tripped(clock: FakeClock, threshold: int = 3) -> CircuitBreaker:
    breaker = CircuitBreaker(threshold=threshold, pause=300, probes=2, clock=clock)
    for _ in range(threshold):
        breaker.record_failure()
    return breaker


def test_defaults_are_the_spec() -> None:
    breaker = CircuitBreaker(clock=FakeClock())
    assert (breaker.threshold, breaker.pause, breaker.probes) == (10, 300.0, 3)


def test_opens_after_threshold_consecutive_failures() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=3, pause=300, clock=clock)
    for _ in range(2):
        breaker.record_failure()
    breaker.record_success()  # not consecutive any more
    for _ in range(2):
        breaker.record_failure()
    assert breaker.state is CLOSED
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state is OPEN
    assert breaker.reopens_at == clock.monotonic() + 300
    assert not breaker.allow()


def test_half_open_after_pause_lets_probes_through() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    clock.advance(299.9)
    assert not breaker.allow()
    clock.advance(0.1)
    assert breaker.state is HALF
    assert breaker.reopens_at is None
    assert [breaker.allow() for _ in range(3)] == [True, True, False]


def test_a_probe_success_closes() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    clock.advance(300)
    assert breaker.allow()
    breaker.record_failure()
    breaker.record_success()
    assert breaker.state is CLOSED
    assert breaker.failures == 0
    assert all(breaker.allow() for _ in range(100))
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state is CLOSED, "a fresh count after closing"


def test_all_probes_failing_pauses_again() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    clock.advance(300)
    assert breaker.allow() and breaker.allow()
    breaker.record_failure()
    assert breaker.state is HALF
    breaker.record_failure()
    assert breaker.state is OPEN
    assert breaker.reopens_at == clock.monotonic() + 300
    clock.advance(300)
    assert breaker.allow()


def test_outcomes_while_open_are_ignored() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state is OPEN
    assert breaker.reopens_at == clock.monotonic() + 300


def test_unanswered_probes_get_another_round() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    clock.advance(300)
    assert breaker.allow() and breaker.allow()
    clock.advance(299)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow(), "probes lost for a whole pause: try again"
    assert breaker.state is HALF


def test_events_record_transitions() -> None:
    clock = FakeClock(start=0)
    breaker = tripped(clock)
    clock.advance(300)
    breaker.allow()
    breaker.record_success()
    events = breaker.take_events()
    assert [(e.old, e.new, e.at) for e in events] == [
        (CLOSED, OPEN, 0),
        (OPEN, HALF, 300),
        (HALF, CLOSED, 300),
    ]
    assert events[0].failures == 3
    assert breaker.take_events() == []


def test_reset_closes() -> None:
    clock = FakeClock()
    breaker = tripped(clock)
    breaker.reset()
    assert breaker.state is CLOSED
    assert breaker.allow()
    assert [e.new for e in breaker.take_events()] == [OPEN, CLOSED]


def test_threshold_zero_disables() -> None:
    breaker = CircuitBreaker(threshold=0, clock=FakeClock())
    for _ in range(1000):
        breaker.record_failure()
    assert breaker.allow()
    assert breaker.take_events() == []


@pytest.mark.parametrize(("pause", "probes"), [(-1, 3), (300, 0)])
def test_rejects_bad_arguments(pause: float, probes: int) -> None:
    with pytest.raises(ValueError, match="breaker"):
        CircuitBreaker(pause=pause, probes=probes, clock=FakeClock())


def test_would_allow_peeks_without_using_a_probe() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker(threshold=2, pause=10, probes=1, clock=clock)
    assert breaker.would_allow
    breaker.record_failure()
    breaker.record_failure()
    assert not breaker.would_allow
    clock.advance(10)
    assert breaker.would_allow
    assert breaker.would_allow  # peeking twice uses nothing
    assert breaker.allow()
    assert not breaker.would_allow
