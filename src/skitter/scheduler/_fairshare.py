"""Which project dispatches next, when several have work.

Each backlogged project gets a *target share* of dispatches in proportion to its queue
length, clamped to ``[min_share, max_share]`` while three or more projects are
backlogged, so a small project always makes progress and a huge one cannot starve the
rest. The clamp is water-filling: shares that hit a bound stay there and the rest is
shared out in proportion again, so the targets always add up to one.

Bounds that cannot all hold are widened to ``1/n``: three projects at most 33 % each
would leave 1 % of dispatches to nobody, so each may take a third; eleven projects
cannot each have 10 %, so each is guaranteed a eleventh. With two projects the cap
cannot hold either (one of them takes at least half); only the floor applies, so the
smaller still gets ``min_share``. One project takes everything.

The picker is deterministic: it keeps the last ``window`` dispatches and picks the
project furthest below its target share of that window (ties go to the name that sorts
first), so shares in any window of ``window`` dispatches stay within a dispatch or
two of the targets while the backlogs stay put.

``pick`` only chooses; ``record`` counts a dispatch. They are apart because the shell
may find it cannot dispatch what was picked (the token bucket ran dry, the lease came
back empty): only what was really dispatched counts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

__all__ = ["FairShare", "target_shares"]


def target_shares(
    backlogs: Mapping[str, int], min_share: float = 0.10, max_share: float = 0.33
) -> dict[str, float]:
    """The share of dispatches each backlogged project should get (they sum to 1)."""
    active = {name: float(n) for name, n in backlogs.items() if n > 0}
    count = len(active)
    if count <= 1:
        return dict.fromkeys(active, 1.0)
    if count == 2:
        lo = min(min_share, 0.5)
        hi = 1.0 - lo
    else:
        lo = min(min_share, 1.0 / count)
        hi = max(max_share, 1.0 / count)
    scale = _water_level(list(active.values()), lo, hi)
    shares = {name: min(hi, max(lo, scale * n)) for name, n in active.items()}
    total = sum(shares.values())
    return {name: share / total for name, share in shares.items()}


def _water_level(backlogs: list[float], lo: float, hi: float) -> float:
    """The scale s with ``sum(clamp(s * b, lo, hi) for b in backlogs) == 1``.

    The sum is piecewise linear and non-decreasing in s, from ``n * lo <= 1`` at s = 0
    to ``n * hi >= 1`` for large s; it bends where some ``s * b`` crosses lo or hi. Walk
    those points in order, keeping how many shares sit at each bound and the backlog of
    the proportional ones, and solve the linear piece that reaches 1: O(n log n).
    """
    bends = sorted([(lo / b, 0, b) for b in backlogs] + [(hi / b, 1, b) for b in backlogs])
    at_lo, at_hi, middle = len(backlogs), 0, 0.0
    for s, kind, b in bends:
        if at_lo * lo + at_hi * hi + s * middle >= 1.0:
            if middle > 0.0:
                return (1.0 - at_lo * lo - at_hi * hi) / middle
            return s
        if kind == 0:
            at_lo -= 1
            middle += b
        else:
            middle -= b
            at_hi += 1
    return bends[-1][0]  # n * hi == 1, give or take rounding: every share at hi


class FairShare:
    """Chooses the next project to dispatch from, over a sliding window of dispatches."""

    __slots__ = ("_counts", "_history", "max_share", "min_share", "window")

    def __init__(
        self, min_share: float = 0.10, max_share: float = 0.33, window: int = 1000
    ) -> None:
        if not 0.0 <= min_share <= max_share <= 1.0:
            raise ValueError(
                f"need 0 <= min_share <= max_share <= 1, got {min_share!r} and {max_share!r}"
            )
        if window < 1:
            raise ValueError(f"fair share window must be >= 1 dispatch, got {window!r}")
        self.min_share = min_share
        self.max_share = max_share
        self.window = window
        self._history: deque[str] = deque()
        self._counts: dict[str, int] = {}

    def targets(self, backlogs: Mapping[str, int]) -> dict[str, float]:
        """The target shares for these backlogs (see ``target_shares``)."""
        return target_shares(backlogs, self.min_share, self.max_share)

    def pick(self, backlogs: Mapping[str, int]) -> str | None:
        """The project that should dispatch next, or None if none has a backlog.

        Does not count the dispatch: call ``record`` once it happened.
        """
        targets = self.targets(backlogs)
        if len(targets) <= 1:
            return next(iter(targets), None)
        history = self._history
        full = len(history) >= self.window
        oldest = history[0] if full else None
        size = len(history) if full else len(history) + 1  # the window after this dispatch
        best: str | None = None
        best_deficit = 0.0
        for name in sorted(targets):
            count = self._counts.get(name, 0) - (name == oldest)
            deficit = targets[name] * size - count
            if best is None or deficit > best_deficit:
                best, best_deficit = name, deficit
        return best

    def record(self, project: str) -> None:
        """Count one dispatch from ``project``."""
        history = self._history
        history.append(project)
        self._counts[project] = self._counts.get(project, 0) + 1
        if len(history) > self.window:
            old = history.popleft()
            left = self._counts[old] - 1
            if left:
                self._counts[old] = left
            else:
                del self._counts[old]

    def window_counts(self) -> dict[str, int]:
        """Dispatches per project in the current window (for status pages)."""
        return dict(self._counts)

    def forget(self, project: str) -> None:
        """Drop a removed project's dispatches from the window."""
        if project in self._counts:
            self._history = deque(name for name in self._history if name != project)
            del self._counts[project]
