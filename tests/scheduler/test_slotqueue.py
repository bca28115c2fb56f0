"""SlotQueues on a fake clock: least-busy dispatch, per-slot limits, back-off, cleanup.

Time is passed in as ``now``; nothing sleeps. The state machine at the end checks the
dispatch choice against a naive model (a dict of lists scanned in full on every pop).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from skitter._clock import FakeClock
from skitter.exceptions import ConfigError
from skitter.scheduler import AutoThrottle, _slotqueue
from skitter.scheduler._breaker import BreakerState
from skitter.scheduler._slotqueue import SlotQueues
from skitter.scheduler._slots import SlotPolicies, SlotPolicy
from skitter.settings import Settings

T0 = 1000.0


def queues(
    default: SlotPolicy | None = None, overrides: dict[str, dict[str, Any]] | None = None, **kw: Any
) -> SlotQueues[str]:
    return SlotQueues(SlotPolicies(default, overrides), seed=7, **kw)


def pop_all(q: SlotQueues[str], now: float) -> list[tuple[str, str]]:
    out = []
    while (got := q.pop(now)) is not None:
        out.append(got)
    return out


# -- order ------------------------------------------------------------------------------
def test_within_a_slot_priority_first_then_fifo() -> None:
    q = queues()
    for item, priority in [("a", 0), ("b", 5), ("c", 0), ("d", 5), ("e", -1)]:
        q.push("h", priority, item)
    assert [item for _, item in pop_all(q, T0)] == ["b", "d", "a", "c", "e"]


def test_least_busy_slot_goes_first_whatever_its_priority() -> None:
    q = queues()
    q.push("busy", 0, "busy-1")
    assert q.pop(T0) == ("busy", "busy-1")
    q.push("busy", 100, "busy-2")
    q.push("idle", -100, "idle-1")
    assert q.pop(T0) == ("idle", "idle-1")  # 0 in flight beats 1 in flight
    assert q.pop(T0) == ("busy", "busy-2")


def test_tie_on_in_flight_broken_by_best_priority_then_arrival() -> None:
    q = queues()
    q.push("x", 1, "x1")
    q.push("y", 3, "y1")
    q.push("z", 1, "z1")
    assert q.pop(T0) == ("y", "y1")
    # x and z both have 0 in flight and priority 1: x's task arrived first.
    assert q.pop(T0) == ("x", "x1")
    assert q.pop(T0) == ("z", "z1")


def test_a_new_higher_priority_head_reranks_its_slot() -> None:
    q = queues()
    q.push("x", 0, "x1")
    q.push("y", 0, "y1")
    q.push("y", 9, "y-urgent")
    assert q.pop(T0) == ("y", "y-urgent")


# -- concurrency ------------------------------------------------------------------------
def test_per_slot_concurrency_is_never_exceeded() -> None:
    q = queues(SlotPolicy(concurrency=2))
    for i in range(5):
        q.push("h", 0, f"h{i}")
    assert len(pop_all(q, T0)) == 2
    assert q.in_flight == 2 and len(q) == 3
    assert q.wait_time(T0) is None  # only a finishing download can help
    q.finished("h", T0)
    assert q.wait_time(T0) == 0.0
    assert pop_all(q, T0) == [("h", "h2")]
    assert q.stats("h")["h"].in_flight == 2


def test_per_slot_override_of_concurrency() -> None:
    q = queues(overrides={"Slow.example": {"concurrency": 1}})
    for i in range(3):
        q.push("slow.example", 0, f"s{i}")
        q.push("fast.example", 0, f"f{i}")
    started = pop_all(q, T0)
    assert [key for key, _ in started].count("slow.example") == 1
    assert [key for key, _ in started].count("fast.example") == 3


# -- delay ------------------------------------------------------------------------------
def test_fixed_delay_between_starts() -> None:
    q = queues(SlotPolicy(delay=2.0, randomize_delay=False))
    for i in range(3):
        q.push("h", 0, f"h{i}")
    assert q.pop(T0) == ("h", "h0")
    q.finished("h", T0 + 0.1)
    assert q.pop(T0 + 1.9) is None
    assert q.wait_time(T0 + 1.9) == pytest.approx(0.1)
    assert q.pop(T0 + 2.0) == ("h", "h1")


def test_randomized_delay_stays_within_half_and_one_and_a_half() -> None:
    q = queues(SlotPolicy(delay=1.0, concurrency=100))
    now, waits = T0, []
    for i in range(300):
        q.push("h", 0, f"h{i}")
    while len(q) > 1:
        assert q.pop(now) is not None
        q.finished("h", now)
        wait = q.wait_time(now)
        assert wait is not None
        waits.append(wait)
        now += wait
    assert all(0.5 <= w <= 1.5 for w in waits)
    assert min(waits) < 0.6 and max(waits) > 1.4  # really spread, not fixed


def test_crawl_delay_is_a_floor_never_shortened_by_jitter() -> None:
    q = queues(SlotPolicy(delay=1.0))
    q.set_crawl_delay("h", 3.0)
    for i in range(20):
        q.push("h", 0, f"h{i}")
    now = T0
    for _ in range(19):
        assert q.pop(now) is not None
        q.finished("h", now)
        assert q.wait_time(now) == 3.0
        now += 3.0
    assert q.stats("h")["h"].delay == 3.0


def test_crawl_delay_survives_the_slot_being_dropped_and_can_be_forgotten() -> None:
    q = queues()
    q.set_crawl_delay("h", 5.0)
    q.push("h", 0, "h0")
    q.pop(T0)
    q.finished("h", T0)
    q.wait_time(T0 + 6)
    assert q.slot_count == 0
    q.push("h", 0, "h1")
    q.push("h", 0, "h2")
    assert q.pop(T0 + 6) == ("h", "h1")
    assert q.wait_time(T0 + 6) == 5.0
    q.set_crawl_delay("h", None)
    with pytest.raises(ValueError, match="'h'"):
        q.set_crawl_delay("h", -1)


# -- token bucket and breaker --------------------------------------------------------------
def test_token_bucket_per_slot() -> None:
    q = queues(overrides={"limited": {"rate": 2.0, "burst": 2.0}})
    for i in range(6):
        q.push("limited", 0, f"l{i}")
        q.push("free", 0, f"f{i}")
    started = pop_all(q, T0)
    assert sum(1 for key, _ in started if key == "limited") == 2  # the burst
    assert sum(1 for key, _ in started if key == "free") == 6
    for key, _ in started:
        q.finished(key, T0)
    assert q.wait_time(T0) == pytest.approx(0.5)
    assert q.pop(T0 + 0.25) is None
    assert q.pop(T0 + 0.5) == ("limited", "l2")
    assert q.pop(T0 + 0.5) is None


def test_breaker_pauses_only_its_slot_then_probes() -> None:
    q = queues(
        overrides={"bad": {"breaker_threshold": 2, "breaker_pause": 10.0, "breaker_probes": 1}}
    )
    for i in range(6):
        q.push("bad", 0, f"b{i}")
        q.push("good", 0, f"g{i}")
    for _ in range(2):
        assert q.pop(T0) is not None  # one from each slot (least busy alternates)
    q.finished("bad", T0, ok=False)
    q.finished("good", T0)
    assert q.pop(T0) == ("bad", "b1")
    q.finished("bad", T0, ok=False)
    assert q.stats("bad")["bad"].breaker is BreakerState.OPEN
    assert {key for key, _ in pop_all(q, T0 + 5)} == {"good"}
    assert q.wait_time(T0 + 5) == pytest.approx(5.0)
    # After the pause one probe goes through; the next waits for its result.
    assert q.pop(T0 + 10) == ("bad", "b2")
    assert q.pop(T0 + 10) is None
    q.finished("bad", T0 + 11)
    assert q.stats("bad")["bad"].breaker is BreakerState.CLOSED
    assert q.pop(T0 + 11) == ("bad", "b3")


def test_breaker_with_probes_that_never_report_tries_again_after_a_pause() -> None:
    q = queues(overrides={"h": {"breaker_threshold": 1, "breaker_pause": 10.0, "concurrency": 5}})
    for i in range(5):
        q.push("h", 0, f"h{i}")
    q.pop(T0)
    q.finished("h", T0, ok=False)
    # Half-open: three probes (the default) go, the fourth waits for a result.
    assert len(pop_all(q, T0 + 10)) == 3
    assert q.wait_time(T0 + 10) == pytest.approx(10.0)
    assert q.pop(T0 + 20) == ("h", "h4")


# -- back-off ---------------------------------------------------------------------------
def test_retry_after_pauses_that_slot_only() -> None:
    q = queues()
    for i in range(3):
        q.push("a", 0, f"a{i}")
        q.push("b", 0, f"b{i}")
    assert q.pop(T0) == ("a", "a0")
    q.finished("a", T0, status=429, retry_after=3.0, ok=False)
    assert {key for key, _ in pop_all(q, T0 + 1)} == {"b"}
    stats = q.stats("a")["a"]
    assert stats.backoff_until == T0 + 3.0 and stats.failed == 1
    assert q.wait_time(T0 + 1) == pytest.approx(2.0)
    assert q.pop(T0 + 2.9) is None
    assert q.pop(T0 + 3.0) == ("a", "a1")


def test_a_shorter_retry_after_never_cuts_a_running_back_off() -> None:
    q = queues()
    for i in range(3):
        q.push("a", 0, f"a{i}")
    pop_all(q, T0)
    q.finished("a", T0, status=429, retry_after=10.0, ok=False)
    q.finished("a", T0 + 1, status=429, retry_after=2.0, ok=False)
    q.finished("a", T0 + 1, status=429, ok=False)
    assert q.stats("a")["a"].backoff_until == T0 + 10.0


def test_retry_after_on_any_status_and_capped() -> None:
    q = queues(retry_after_max=60.0)
    q.push("a", 0, "a0")
    q.push("a", 0, "a1")
    q.pop(T0)
    q.finished("a", T0, status=200, retry_after=1e9)
    assert q.stats("a")["a"].backoff_until == T0 + 60.0


def test_429_without_retry_after_backs_off_exponentially_and_200_resets() -> None:
    q = queues(SlotPolicy(concurrency=8), backoff_base=1.0, backoff_max=5.0)
    for i in range(20):
        q.push("a", 0, f"a{i}")
    now = T0
    expected = [1.0, 2.0, 4.0, 5.0, 5.0]
    for wait in expected:
        assert q.pop(now) is not None
        q.finished("a", now, status=429, ok=False)
        assert q.wait_time(now) == wait
        now += wait
    assert q.pop(now) is not None
    q.finished("a", now, status=200)
    assert q.pop(now) is not None
    q.finished("a", now, status=503, ok=False)
    assert q.wait_time(now) == 1.0


def test_answers_in_flight_when_a_back_off_began_do_not_double_it() -> None:
    q = queues()
    for i in range(6):
        q.push("a", 0, f"a{i}")
    assert len(pop_all(q, T0)) == 6
    for _ in range(6):
        q.finished("a", T0 + 0.1, status=429, ok=False)
    assert q.stats("a")["a"].backoff_until == T0 + 1.1


# -- memory: idle slots are dropped ----------------------------------------------------------
def test_idle_slots_are_dropped() -> None:
    q = queues()
    for i in range(1000):
        q.push(f"host{i}.example", 0, f"u{i}")
    started = pop_all(q, T0)
    assert q.slot_count == 1000
    for key, _ in started:
        q.finished(key, T0)
    assert q.slot_count == 0
    assert q.wait_time(T0) is None


def test_idle_slot_kept_until_its_delay_and_back_off_pass() -> None:
    q = queues(SlotPolicy(delay=2.0, randomize_delay=False))
    q.push("d", 0, "d0")
    q.push("r", 0, "r0")
    pop_all(q, T0)
    q.finished("d", T0)
    q.finished("r", T0, status=503, retry_after=10.0, ok=False)
    assert set(q.stats()) == {"d", "r"}  # they still hold a delay to keep
    assert q.wait_time(T0 + 2.0) is None  # an idle slot is nothing to wake up for
    assert set(q.stats()) == {"r"}
    q.pop(T0 + 10.0)
    assert q.slot_count == 0


def test_keep_idle_holds_what_a_slot_learned_through_short_gaps() -> None:
    q = queues(throttle=AutoThrottle(start_delay=5.0), keep_idle=60.0)
    q.push("h", 0, "h0")
    q.pop(T0)
    q.finished("h", T0 + 1, latency=0.1, status=200)
    learned = q.stats("h")["h"].delay
    assert learned < 5.0
    assert q.wait_time(T0 + 30) is None and q.stats("h")["h"].delay == learned
    q.wait_time(T0 + 61)
    assert q.slot_count == 0


def test_slot_recreated_after_drop_is_not_confused_with_the_old_one() -> None:
    q = queues(SlotPolicy(delay=1.0, randomize_delay=False))
    q.push("h", 0, "h0")
    q.pop(T0)
    q.finished("h", T0)  # idle, expires at T0 + 1
    q.push("h", 0, "h1")  # back in business: must not be dropped at T0 + 1
    assert q.pop(T0 + 1) == ("h", "h1")
    assert q.slot_count == 1


def test_stale_heap_entries_do_not_pile_up() -> None:
    q = queues()
    for i in range(10_000):
        q.push("h", i, f"h{i}")  # each push is a new head: a new entry, the old one stale
    assert len(q._ready) <= 2 * q.slot_count + 65
    assert q.pop(T0) == ("h", "h9999")


def test_heap_entries_of_a_dropped_slot_never_pass_for_a_new_one() -> None:
    q = queues()
    q.push("h", 0, "h0")
    q.push("h", 5, "h1")  # leaves a stale entry ranked (0 in flight, priority 0, seq 1)
    assert q.pop(T0) == ("h", "h1")
    q.finished("h", T0)
    assert q.drain() == ["h0"]
    assert q.slot_count == 0
    q.push("x", 0, "x0")
    q.push("h", -9, "h2")  # a new "h": the old entry must not rank it first
    assert q.pop(T0) == ("x", "x0")


@pytest.mark.slow  # 100,000 slots: seconds even on an idle machine
# -- scale ------------------------------------------------------------------------------
def test_100k_slots_cost_no_scan_per_pop(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = 0
    real = SlotQueues._ready_at

    def counting(self: SlotQueues[str], slot: Any, now: float) -> float:
        nonlocal checks
        checks += 1
        return real(self, slot, now)

    heap_ops = 0

    def count(fn: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            nonlocal heap_ops
            heap_ops += 1
            return fn(*args)

        return wrapper

    monkeypatch.setattr(SlotQueues, "_ready_at", counting)
    monkeypatch.setattr(_slotqueue, "heappush", count(_slotqueue.heappush))
    monkeypatch.setattr(_slotqueue, "heappop", count(_slotqueue.heappop))

    n = 100_000
    q = queues(SlotPolicy(concurrency=1))
    for i in range(n):
        q.push(f"h{i}", i % 7, f"a{i}")
        q.push(f"h{i}", 0, f"b{i}")
    started = pop_all(q, T0)
    assert len(started) == n  # one per slot: concurrency 1
    for key, _ in started:
        q.finished(key, T0)
    assert len(pop_all(q, T0)) == n
    operations = 2 * n + 2 * n + n  # pushes, pops, finishes
    # A scan over the slots per pop would cost ~n**2 checks; this is a small constant each.
    assert checks <= 3 * operations
    assert heap_ops <= 6 * operations
    assert q.in_flight == n and len(q) == 0


# -- stats, drain, misuse ---------------------------------------------------------------
def test_stats_of_a_slot() -> None:
    q = queues(overrides={"h": {"concurrency": 3, "delay": 0.5, "breaker_threshold": 5}})
    for i in range(5):
        q.push("h", 0, f"h{i}")
    q.pop(T0)
    q.finished("h", T0, ok=False)
    q.pop(T0 + 1)
    stats = q.stats("h")["h"]
    assert (stats.in_flight, stats.queued, stats.done, stats.failed) == (1, 3, 0, 1)
    assert (stats.concurrency, stats.delay, stats.backoff_until) == (3, 0.5, None)
    assert stats.breaker is BreakerState.CLOSED
    assert q.stats("nowhere") == {}
    assert list(q.stats()) == ["h"]


def test_drain_gives_back_everything_queued_in_order() -> None:
    q = queues(SlotPolicy(concurrency=1))
    for i in range(3):
        q.push("a", i, f"a{i}")
        q.push("b", 0, f"b{i}")
    assert q.pop(T0) == ("a", "a2")
    assert q.drain() == ["a1", "a0", "b0", "b1", "b2"]
    assert len(q) == 0
    assert q.pop(T0) is None and q.in_flight == 1
    q.finished("a", T0)
    assert q.slot_count == 0


def test_finished_without_a_download_in_flight_is_an_error() -> None:
    q = queues()
    with pytest.raises(ValueError, match="'ghost'"):
        q.finished("ghost", T0)


def test_time_never_goes_back() -> None:
    q = queues(SlotPolicy(delay=1.0, randomize_delay=False))
    q.push("h", 0, "h0")
    q.push("h", 0, "h1")
    q.pop(T0)
    assert q.pop(T0 - 100) is None  # an earlier ``now`` reads as the latest one
    assert q.wait_time(T0 - 100) == 1.0


# -- AutoThrottle wiring ---------------------------------------------------------------------
def test_autothrottle_adjusts_the_slot_delay_toward_latency() -> None:
    throttle = AutoThrottle(start_delay=5.0, target_concurrency=1.0)
    q = SlotQueues(
        SlotPolicies(SlotPolicy(randomize_delay=False), {"fixed": {"throttle": False}}),
        throttle=throttle,
    )
    q.push("fixed", 0, "f0")
    for i in range(40):
        q.push("h", 0, f"h{i}")
    assert q.stats("h")["h"].delay == 5.0
    assert q.stats("fixed")["fixed"].delay == 0.0
    assert q.pop(T0) == ("fixed", "f0")  # least busy; its delay is its own
    q.finished("fixed", T0, latency=9.0, status=200)
    assert q.slot_count == 1
    now = T0
    for _ in range(30):
        assert q.pop(now) is not None
        now += 0.2
        q.finished("h", now, latency=0.2, status=200)
        wait = q.wait_time(now)
        assert wait is not None
        now += wait
    assert q.stats("h")["h"].delay == pytest.approx(0.2, rel=1e-6)


def test_a_shared_throttle_paces_only_by_the_slots_floor_and_still_learns() -> None:
    """A cluster's worker: the throttled delay lives in Redis and the gate applies it, so
    the local slot waits only for its configured delay (and Crawl-delay)."""
    policies = SlotPolicies(SlotPolicy(delay=0.5, randomize_delay=False, concurrency=1))
    q: SlotQueues[str] = SlotQueues(
        policies, throttle=AutoThrottle(start_delay=5.0), shared_throttle=True
    )
    for i in range(3):
        q.push("h", 0, f"h{i}")
    assert q.pop(T0) == ("h", "h0")
    q.finished("h", T0 + 0.1, latency=0.1, status=200)
    assert q.wait_time(T0 + 0.1) == pytest.approx(0.4)  # the floor, not the 5 s delay
    learned = AutoThrottle(start_delay=5.0).next_delay(5.0, 0.1, 200, min_delay=0.5)
    assert q.stats("h")["h"].delay == learned  # still learned, and reported
    q.set_crawl_delay("h", 2.0)
    assert q.pop(T0 + 0.5) == ("h", "h1")
    q.finished("h", T0 + 0.6, latency=0.1, status=200)
    assert q.wait_time(T0 + 0.6) == pytest.approx(1.9)  # Crawl-delay is a floor too


def test_autothrottle_debug_logs_each_adjustment(caplog: pytest.LogCaptureFixture) -> None:
    q: SlotQueues[str] = SlotQueues(throttle=AutoThrottle(debug=True))
    q.push("h", 0, "h0")
    q.pop(T0)
    with caplog.at_level("INFO", logger="skitter.throttle"):
        q.finished("h", T0 + 1, latency=1.0, status=200)
    assert "slot: h" in caplog.text and "latency: 1000 ms" in caplog.text


# -- policies -----------------------------------------------------------------------------
def test_policies_from_settings() -> None:
    policies = SlotPolicies.from_settings(
        Settings(
            {
                "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
                "DOWNLOAD_DELAY": 0.25,
                "DOWNLOAD_SLOT_RATE": 3,
                "DOWNLOAD_SLOTS": {"Example.com": {"concurrency": 2, "delay": 1.0}},
            }
        )
    )
    assert policies["other.org"] == SlotPolicy(concurrency=4, delay=0.25, rate=3.0)
    assert policies["example.com"] == SlotPolicy(concurrency=2, delay=1.0, rate=3.0)
    default = SlotPolicies.from_settings(Settings()).default
    assert default == SlotPolicy()
    assert default.rate is None and default.breaker_threshold == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"concurency": 2}, "unknown key 'concurency'; did you mean 'concurrency'"),
        ({"concurrency": 0}, "concurrency must be an integer >= 1"),
        ({"delay": -1}, "delay must be a finite number"),
        ({"rate": math.nan}, "rate must be a finite number"),
        ({"randomize_delay": "yes"}, "randomize_delay must be true or false"),
        ({"rate": 1.0, "burst": 0.5}, "burst must be at least 1"),
    ],
)
def test_bad_download_slots_name_the_slot(override: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=r"DOWNLOAD_SLOTS\['h.example'\]") as info:
        SlotPolicies(overrides={"h.example": override})
    assert message in str(info.value)


def test_rate_zero_means_no_bucket() -> None:
    assert SlotPolicy(rate=0).rate is None


# -- model check -----------------------------------------------------------------------------
KEYS = ["a", "b", "c", "d"]
OVERRIDES: dict[str, dict[str, Any]] = {
    "a": {"concurrency": 1, "delay": 1.0},
    "b": {"concurrency": 2},
    "c": {"delay": 0.5},
}
DEFAULT = SlotPolicy(concurrency=3, randomize_delay=False)


class _Model:
    """One slot, naively: a list of (priority, seq, item) scanned in full."""

    def __init__(self, policy: SlotPolicy) -> None:
        self.policy = policy
        self.items: list[tuple[int, int, int]] = []
        self.in_flight = 0
        self.next_start = -math.inf
        self.backoff_until = -math.inf

    def ready_at(self) -> float:
        return max(self.next_start, self.backoff_until)

    def head(self) -> tuple[int, int, int]:
        return min(self.items, key=lambda e: (-e[0], e[1]))


class SlotQueuesMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(T0)
        self.q: SlotQueues[int] = SlotQueues(SlotPolicies(DEFAULT, OVERRIDES), seed=1)
        policies = SlotPolicies(DEFAULT, OVERRIDES)
        self.model = {key: _Model(policies[key]) for key in KEYS}
        self.seq = 0

    @property
    def now(self) -> float:
        return self.clock.monotonic()

    @rule(key=st.sampled_from(KEYS), priority=st.integers(-2, 2))
    def push(self, key: str, priority: int) -> None:
        self.seq += 1
        self.q.push(key, priority, self.seq)
        self.model[key].items.append((priority, self.seq, self.seq))

    @rule(dt=st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]))
    def advance(self, dt: float) -> None:
        self.clock.advance(dt)

    @rule()
    def pop(self) -> None:
        now = self.now
        eligible = [
            (m.in_flight, -m.head()[0], m.head()[1], key)
            for key, m in self.model.items()
            if m.items and m.in_flight < m.policy.concurrency and m.ready_at() <= now
        ]
        got = self.q.pop(now)
        if not eligible:
            assert got is None
            return
        key = min(eligible)[3]
        slot = self.model[key]
        head = slot.head()
        assert got == (key, head[2])
        slot.items.remove(head)
        slot.in_flight += 1
        if slot.policy.delay:
            slot.next_start = now + slot.policy.delay

    @precondition(lambda self: any(m.in_flight for m in self.model.values()))
    @rule(data=st.data(), retry_after=st.sampled_from([None, None, 0.5, 2.0]))
    def finish(self, data: st.DataObject, retry_after: float | None) -> None:
        key = data.draw(st.sampled_from([k for k, m in self.model.items() if m.in_flight]))
        now = self.now
        status = 200 if retry_after is None else 503
        self.q.finished(key, now, status=status, retry_after=retry_after, ok=status == 200)
        slot = self.model[key]
        slot.in_flight -= 1
        if retry_after is not None:
            slot.backoff_until = max(slot.backoff_until, now + retry_after)

    @rule()
    def wait_time(self) -> None:
        now = self.now
        waits = [
            max(0.0, m.ready_at() - now)
            for m in self.model.values()
            if m.items and m.in_flight < m.policy.concurrency
        ]
        assert self.q.wait_time(now) == (min(waits) if waits else None)

    @invariant()
    def counts_agree_and_limits_hold(self) -> None:
        assert len(self.q) == sum(len(m.items) for m in self.model.values())
        assert self.q.in_flight == sum(m.in_flight for m in self.model.values())
        for key, m in self.model.items():
            stats = self.q.stats(key).get(key)
            in_flight = stats.in_flight if stats else 0
            assert in_flight == m.in_flight <= m.policy.concurrency
            if stats is not None:
                assert stats.queued == len(m.items)

    @invariant()
    def no_idle_slot_outlives_its_delay(self) -> None:
        now = self.q._clock.now
        for key, slot in self.q._slots.items():
            busy = slot.queue or slot.in_flight
            assert busy or max(slot.next_start, slot.backoff_until) > now, key


SlotQueuesMachine.TestCase.settings = hsettings(
    max_examples=150, stateful_step_count=60, deadline=None
)
# A large search: seconds even on an idle machine.
test_slot_queues_against_a_naive_model = pytest.mark.slow(SlotQueuesMachine.TestCase)


def test_a_slot_awaiting_its_rules_starts_one_download_at_a_time() -> None:
    queues: SlotQueues[str] = SlotQueues(SlotPolicies(SlotPolicy(concurrency=4)), await_rules=True)
    for n in range(4):
        queues.push("h", 0, f"t{n}")
    assert queues.pop(0.0) == ("h", "t0")
    assert queues.pop(0.0) is None  # robots.txt not read yet: one at a time
    queues.set_crawl_delay("h", None)  # read: no Crawl-delay
    assert queues.pop(0.0) == ("h", "t1")
    assert queues.pop(0.0) == ("h", "t2")
