"""Field coverage: how many of the scraped items of each class have each field filled.

Counted only when something reads it (a coverage monitor, the run report): the monitors
switch it on (``ItemPipelineManager.count_coverage``), and then every scraped item costs
one walk over its fields. A field is covered when it is filled: not None, not an empty
string, list or dict (a site that changed its markup leaves ``price: None``, which must
not count). Nested dicts count too, their keys joined with ``/``, as Spidermon's rules
name them (``Product/offer/price``). Stats: ``coverage/items/<Class>`` items scraped,
``coverage/fields/<Class>/<field>`` of them with the field filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skitter._types import StatsSink
from skitter.items import item_to_dict

__all__ = ["FIELDS", "ITEMS", "FieldCoverage", "coverage", "filled"]

ITEMS = "coverage/items/"
FIELDS = "coverage/fields/"


def filled(value: Any) -> bool:
    """Whether ``value`` counts as the field being there."""
    if value is None:
        return False
    if isinstance(value, str | list | tuple | dict):
        return bool(value.strip() if isinstance(value, str) else value)
    return True


class FieldCoverage:
    """Counts the filled fields of each scraped item into the stats."""

    def __init__(self, stats: StatsSink) -> None:
        self._stats = stats

    def add(self, item: Any, spider: Any = None) -> Any:
        """Count ``item`` and pass it on (the manager's last step)."""
        kind = item.__class__.__name__
        self._stats.inc(ITEMS + kind)
        self._fields(f"{FIELDS}{kind}/", item_to_dict(item))
        return item

    def _fields(self, prefix: str, data: Mapping[str, Any]) -> None:
        for name, value in data.items():
            if filled(value):
                self._stats.inc(f"{prefix}{name}")
                if isinstance(value, Mapping):
                    self._fields(f"{prefix}{name}/", value)


def coverage(stats: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """{Class: {field: fraction of its items with the field filled}} from the stats."""
    out: dict[str, dict[str, float]] = {}
    for key, count in stats.items():
        if key.startswith(ITEMS) and count:
            out[key[len(ITEMS) :]] = {}
    for key, count in stats.items():
        if key.startswith(FIELDS):
            kind, _, field = key[len(FIELDS) :].partition("/")
            total = stats.get(ITEMS + kind, 0)
            if total:
                out.setdefault(kind, {})[field] = count / total
    return {kind: dict(sorted(fields.items())) for kind, fields in sorted(out.items())}
