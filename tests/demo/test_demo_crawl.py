"""``skitter demo`` end to end: the whole shop is crawled and the items are exactly the
site's published list."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from skitter.cli import main
from skitter.cli._demo import compare_items
from skitter.demo import expected_items


@pytest.mark.slow  # the whole demo shop, retries included: seconds on an idle machine
def test_demo_crawls_exactly_the_expected_items(tmp_path: Path) -> None:
    output = tmp_path / "items.jsonl"
    stats_path = tmp_path / "stats.json"
    code = main(["demo", "-o", str(output), "--no-progress", "--stats-json", str(stats_path)])
    assert code == 0
    scraped = [orjson.loads(line) for line in output.read_bytes().splitlines()]
    assert compare_items(scraped, expected_items()) == ([], [])
    stats = orjson.loads(stats_path.read_bytes())
    assert stats["finish_reason"] == "finished"
    assert stats["item_scraped_count"] == len(expected_items())
    assert stats["retry/max_reached"] >= 1  # the always-broken page was retried, then given up
    assert stats["offsite/filtered"] >= 1


def test_compare_items_counts_duplicates_and_misses() -> None:
    a, b = {"sku": "a"}, {"sku": "b"}
    assert compare_items([a, a], [a, b]) == ([b], [a])
    assert compare_items([b, a], [a, b]) == ([], [])
