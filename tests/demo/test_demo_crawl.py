"""``skitter demo`` end to end: the whole shop is crawled and the items are exactly the
site's published list."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import orjson
import pytest

from skitter.cli import main
from skitter.cli._demo import compare_items
from skitter.demo import expected_items

SRC = str(Path(__file__).resolve().parents[2] / "src")


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


async def test_the_demo_announces_the_error_it_provokes_and_warns_of_nothing(
    tmp_path: Path,
) -> None:
    """A first run must not look broken: the one ERROR (the shop's always-500 page) is
    announced before it shows, and a machine without a browser is no WARNING (the crawl
    skips the JavaScript pages and the check expects that)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SKITTER_")},
        "PYTHONPATH": SRC,
        "SKITTER_BROWSER_EXECUTABLE_PATH": str(tmp_path / "no-chromium"),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "demo",
        "--no-progress",
        "-o",
        str(tmp_path / "items.jsonl"),
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=50)
    lines = out.decode().splitlines()
    assert proc.returncode == 0, out.decode()
    assert not [line for line in lines if " WARNING: " in line]
    errors = [n for n, line in enumerate(lines) if " ERROR: " in line]
    assert errors and all("/gift-cards" in lines[n] for n in errors)
    [note] = [n for n, line in enumerate(lines) if line.startswith("Expected on the way")]
    assert "one ERROR, for /gift-cards" in lines[note] and note < errors[0]
    assert any("Skipping the demo shop's JavaScript pages (expected" in line for line in lines)
