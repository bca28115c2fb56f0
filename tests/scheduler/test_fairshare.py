"""FairShare: proportional dispatch with floors and caps over a sliding window."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skitter.scheduler._fairshare import FairShare, target_shares


def run(share: FairShare, backlogs: dict[str, int], picks: int, drain: bool) -> list[str]:
    order = []
    for _ in range(picks):
        name = share.pick(backlogs)
        if name is None:
            break
        share.record(name)
        order.append(name)
        if drain:
            backlogs[name] -= 1
    return order


def windows(order: list[str], window: int) -> list[Counter[str]]:
    counts: Counter[str] = Counter(order[:window])
    out = [counts.copy()]
    for i in range(window, len(order)):
        counts[order[i]] += 1
        counts[order[i - window]] -= 1
        out.append(counts.copy())
    return out


def test_nothing_to_pick() -> None:
    assert FairShare().pick({}) is None
    assert FairShare().pick({"a": 0}) is None


def test_one_project_takes_everything() -> None:
    assert FairShare().pick({"a": 0, "b": 5}) == "b"
    assert target_shares({"b": 5}) == {"b": 1.0}


def test_proportional_within_bounds() -> None:
    shares = target_shares({"a": 100, "b": 200, "c": 300, "d": 400})
    # d and then c hit the cap; a and b share the rest as 1:2.
    assert shares == pytest.approx({"a": 0.34 / 3, "b": 0.68 / 3, "c": 0.33, "d": 0.33})
    assert target_shares({"a": 2, "b": 3, "c": 3, "d": 2}) == pytest.approx(
        {"a": 0.2, "b": 0.3, "c": 0.3, "d": 0.2}
    )


def test_small_project_gets_the_floor_and_big_ones_the_cap() -> None:
    shares = target_shares({"tiny": 1, "big": 10**6, "huge": 10**7, "mid": 10**5})
    assert shares["tiny"] == pytest.approx(0.10)
    assert shares["big"] == pytest.approx(0.33)
    assert shares["huge"] == pytest.approx(0.33)
    assert shares["mid"] == pytest.approx(0.24)


def test_bounds_widen_when_they_cannot_hold() -> None:
    three = target_shares({"a": 1, "b": 10**6, "c": 10**6})
    assert three == pytest.approx(dict.fromkeys("abc", 1 / 3))
    many = target_shares({str(i): 10**i for i in range(12)})
    assert all(share == pytest.approx(1 / 12) for share in many.values())


def test_two_projects_keep_only_the_floor() -> None:
    shares = target_shares({"small": 1, "large": 10**6})
    assert shares == pytest.approx({"small": 0.10, "large": 0.90})
    assert target_shares({"a": 1, "b": 1}) == pytest.approx({"a": 0.5, "b": 0.5})


def test_exact_round_robin_for_equal_backlogs() -> None:
    order = run(FairShare(window=30), {"a": 10**6, "b": 10**6, "c": 10**6}, 12, drain=False)
    assert order == list("abc" * 4)


def test_exact_shares_in_every_window() -> None:
    backlogs = {"tiny": 3, "mid": 2000, "big": 10**6, "huge": 10**7}
    order = run(FairShare(window=100), backlogs, 1000, drain=False)
    for counts in windows(order, 100):
        assert counts == {"tiny": 10, "mid": 24, "big": 33, "huge": 33}


def test_pick_does_not_count_until_recorded() -> None:
    share = FairShare(window=10)
    backlogs = {"a": 5, "b": 5}
    assert share.pick(backlogs) == share.pick(backlogs) == "a"
    share.record("a")
    assert share.pick(backlogs) == "b"
    assert share.window_counts() == {"a": 1}


def test_window_slides() -> None:
    share = FairShare(window=3)
    for name in "aaab":
        share.record(name)
    assert share.window_counts() == {"a": 2, "b": 1}
    share.forget("a")
    assert share.window_counts() == {"b": 1}


def test_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError, match="min_share"):
        FairShare(min_share=0.5, max_share=0.2)
    with pytest.raises(ValueError, match="window"):
        FairShare(window=0)


@pytest.mark.slow  # a large search: seconds even on an idle machine
@settings(max_examples=100, deadline=None)
@given(
    backlogs=st.dictionaries(
        st.sampled_from("abcdefg"), st.integers(1, 10**7), min_size=3, max_size=7
    ),
    drain=st.booleans(),
)
def test_every_window_respects_the_bounds(backlogs: dict[str, int], drain: bool) -> None:
    """While three or more projects have work, every window of ``window`` dispatches
    gives each between the floor and the cap, within two dispatches -- also while the
    backlogs drain and the targets move."""
    window = 200
    if drain:  # enough work that nobody runs out during the run
        backlogs = {name: n + 3 * window for name, n in backlogs.items()}
    lo = min(0.10, 1 / len(backlogs))
    hi = max(0.33, 1 / len(backlogs))
    order = run(FairShare(window=window), backlogs, 3 * window, drain)
    for counts in windows(order, window):
        for name in backlogs:
            assert lo * window - 2 <= counts[name] <= hi * window + 2, (name, counts)


@settings(max_examples=60, deadline=None)
@given(backlogs=st.dictionaries(st.text(min_size=1), st.integers(0, 10**9), max_size=15))
def test_targets_are_shares(backlogs: dict[str, int]) -> None:
    shares = target_shares(backlogs)
    active = {name for name, n in backlogs.items() if n > 0}
    assert set(shares) == active
    if active:
        assert sum(shares.values()) == pytest.approx(1.0)
        assert all(share > 0 for share in shares.values())
