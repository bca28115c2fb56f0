"""A run's items, read back from its JSON lines feed: filtered, paged, exported.

The filter is pyspider's results page's, by field: ``field`` alone keeps the items that
have it; with ``value``, those whose field, as text, contains ``value`` (case
insensitive). A line that is not a JSON object (a feed cut by a killed run) is counted
and reported, never silently skipped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

__all__ = ["ItemFilter", "ItemPage", "read_page", "to_csv", "to_jsonl"]


@dataclass(frozen=True, slots=True)
class ItemFilter:
    field: str | None = None
    value: str | None = None

    def keeps(self, item: dict[str, Any]) -> bool:
        if not self.field:
            return True
        if self.field not in item:
            return False
        if not self.value:
            return True
        found = item[self.field]
        text = found if isinstance(found, str) else orjson.dumps(found, default=str).decode()
        return self.value.lower() in text.lower()


@dataclass(slots=True)
class ItemPage:
    items: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0  # matching items in the whole file
    unreadable: int = 0  # lines that are not JSON objects
    columns: list[str] = field(default_factory=list)


def _items(path: Path, counter: ItemPage | None = None) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        return
    with path.open("rb") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError:
                item = None
            if not isinstance(item, dict):
                if counter is not None:
                    counter.unreadable += 1
                continue
            yield item


def read_page(path: Path, keep: ItemFilter, *, page: int, per_page: int) -> ItemPage:
    """Matching items ``page`` (from 1) of ``per_page``, and how many match in all."""
    result = ItemPage()
    first = (page - 1) * per_page
    for item in _items(path, result):
        if not keep.keeps(item):
            continue
        if first <= result.total < first + per_page:
            result.items.append(item)
        result.total += 1
    result.columns = _columns(result.items)
    return result


def _columns(items: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.update(dict.fromkeys(item))
    return list(seen)


def to_jsonl(path: Path, keep: ItemFilter) -> bytes:
    return b"".join(orjson.dumps(item) + b"\n" for item in _items(path) if keep.keeps(item))


def to_csv(path: Path, keep: ItemFilter) -> str:
    """Every matching item as CSV; the columns are every field any of them has, and a
    field that is not text is written as JSON."""
    items = [item for item in _items(path) if keep.keeps(item)]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=_columns(items), lineterminator="\n")
    writer.writeheader()
    for item in items:
        writer.writerow(
            {
                k: v if isinstance(v, str) else orjson.dumps(v, default=str).decode()
                for k, v in item.items()
            }
        )
    return out.getvalue()
