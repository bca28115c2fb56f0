"""What the processes of a ``--processes`` crawl share out and add up: the rate, the
statistics, and items as plain dicts (for an item that cannot be pickled)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from itemadapter import ItemAdapter

__all__ = ["item_dict", "merge_stats", "shared_rate"]


def merge_stats(base: dict[str, Any], reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts summed over ``base`` and every report; other values as first seen."""
    merged = dict(base)
    for report in reports:
        for key, value in report.items():
            if key.endswith("_time") or key == "elapsed_time_seconds":
                continue  # the coordinator's own
            mine = merged.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                merged[key] = (mine if isinstance(mine, int | float) else 0) + value
            elif key not in merged:
                merged[key] = value
    return merged


def shared_rate(
    rate: float | None, burst: float | None, workers: int
) -> tuple[float | None, float | None]:
    """One worker's share of the crawl's rate and burst: whichever worker holds the
    tasks, the crawl never goes faster than asked."""
    if rate is None or workers == 1:
        return rate, burst
    return rate / workers, burst and max(1.0, burst / workers)


def item_dict(item: Any) -> dict[str, Any]:
    """An item as the plain dict that crosses to the coordinator."""
    return ItemAdapter(item).asdict()
